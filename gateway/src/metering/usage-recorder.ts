import { randomUUID } from 'node:crypto';
import type { Logger } from '@supply/kit';
import { MAX_BATCH_RECORDS, utcDay, type UsageBatch, type UsageTotal } from '@supply/contracts';

/** One metered request, as the metering step hands it over when the answer is done. */
export type MeteredUse = Pick<UsageTotal, 'tenant' | 'method' | 'endpoint' | 'token_id'> & {
  /** Credits spent (0 once refunded). */
  cost: number;
  /** Status answered; 499 when the client went away first. */
  status: number;
  at: Date;
};

const DAY_MS = 86_400_000;

export interface UsageRecorderOptions {
  /** Durably hands one batch to the bus (message id = batch id). */
  send(batch: UsageBatch): Promise<void>;
  logger: Logger;
  /** A batch leaves this long after its first request at the latest. */
  flushEveryMs?: number;
  /** ...or as soon as it holds this many totals (however many requests they count). */
  maxBatch?: number;
  /** Waits between attempts to send one batch (always under the same id); dropped after the last. */
  retryDelaysMs?: number[];
  /** Batches waiting for the bus at once; past it new ones are dropped. */
  maxPendingBatches?: number;
}

/**
 * Counts metered requests off the request path and sends the counts in batches: the answer
 * never waits for the bus, the bus carries one message per batch rather than per request, and
 * a batch carries one total per tenant, day, method, endpoint and token, however many requests
 * it counts (the sums the tokens service keeps; a request's own detail is in the access log).
 * A batch that fails to send is retried under the same id (so the tokens service folds it once
 * even if an attempt did land); an outage is logged when it starts and when it ends, with how
 * many requests went uncounted, never per request.
 */
export class UsageRecorder {
  readonly #send: (batch: UsageBatch) => Promise<void>;
  readonly #logger: Logger;
  readonly #flushEveryMs: number;
  readonly #maxBatch: number;
  readonly #retryDelaysMs: number[];
  readonly #maxPendingBatches: number;
  readonly #pending = new Set<Promise<void>>();
  #totals = new Map<string, UsageTotal>();
  /** The UTC day last metered, kept so most requests need no date formatting. */
  #dayStart = Number.NaN;
  #day = '';
  #timer: NodeJS.Timeout | undefined;
  #failing = false;
  #lost = 0;

  constructor(options: UsageRecorderOptions) {
    this.#send = options.send;
    this.#logger = options.logger;
    this.#flushEveryMs = options.flushEveryMs ?? 200;
    this.#maxBatch = Math.min(options.maxBatch ?? 500, MAX_BATCH_RECORDS);
    this.#retryDelaysMs = options.retryDelaysMs ?? [200, 1_000, 5_000];
    this.#maxPendingBatches = options.maxPendingBatches ?? 200;
  }

  /** Batches on their way to the bus. */
  get pending(): number {
    return this.#pending.size;
  }

  record(use: MeteredUse): void {
    const day = this.#dayOf(use.at);
    const key = `${use.tenant}\n${day}\n${use.method}\n${use.endpoint}\n${use.token_id}`;
    let total = this.#totals.get(key);
    if (total === undefined) {
      total = {
        tenant: use.tenant,
        day,
        method: use.method,
        endpoint: use.endpoint,
        token_id: use.token_id,
        requests: 0,
        credits: 0,
        errors: 0,
      };
      this.#totals.set(key, total);
    }
    total.requests += 1;
    total.credits += use.cost;
    if (use.status >= 400) total.errors += 1;
    if (this.#totals.size >= this.#maxBatch) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.#flushEveryMs).unref();
  }

  /** Sends the counts collected so far now. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#totals.size === 0) return;
    const batch: UsageBatch = { id: randomUUID(), totals: [...this.#totals.values()] };
    this.#totals = new Map();
    if (this.#pending.size >= this.#maxPendingBatches) {
      this.#lose(batch);
      return;
    }
    const sending = this.#deliver(batch).finally(() => this.#pending.delete(sending));
    this.#pending.add(sending);
  }

  /** Sends what is collected and waits for every batch on its way, at most `timeoutMs`. */
  async drain(timeoutMs = 5_000): Promise<void> {
    this.flush();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.#pending]), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  async #deliver(batch: UsageBatch): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#send(batch);
        if (this.#failing) {
          this.#failing = false;
          this.#logger.info({ lost_requests: this.#lost }, 'usage counts reach the bus again');
          this.#lost = 0;
        }
        return;
      } catch (err) {
        if (!this.#failing) {
          this.#failing = true;
          this.#logger.warn({ err }, 'usage counts cannot be sent to the bus; retrying');
        }
        const delay = this.#retryDelaysMs[attempt];
        if (delay === undefined) {
          this.#lose(batch);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  #lose(batch: UsageBatch): void {
    if (this.#lost === 0) this.#logger.error('usage counts are being lost: the bus has not taken them');
    for (const total of batch.totals ?? []) this.#lost += total.requests;
  }

  #dayOf(at: Date): string {
    const ms = at.getTime();
    if (!(ms >= this.#dayStart && ms < this.#dayStart + DAY_MS)) {
      this.#dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
      this.#day = utcDay(at);
    }
    return this.#day;
  }
}
