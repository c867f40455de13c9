import { randomUUID } from 'node:crypto';
import type { Logger } from '@supply/kit';
import { MAX_BATCH_RECORDS, type UsageBatch, type UsageRecord } from '@supply/contracts';

export interface UsageRecorderOptions {
  /** Durably hands one batch to the bus (message id = batch id). */
  send(batch: UsageBatch): Promise<void>;
  logger: Logger;
  /** A batch leaves this long after its first record at the latest. */
  flushEveryMs?: number;
  /** ...or as soon as it holds this many records. */
  maxBatch?: number;
  /** Waits between attempts to send one batch (always under the same id); dropped after the last. */
  retryDelaysMs?: number[];
  /** Batches waiting for the bus at once; past it new ones are dropped. */
  maxPendingBatches?: number;
}

/**
 * Collects usage records off the request path and sends them in batches: the answer never
 * waits for the bus, and the bus carries one message per batch rather than per request. A
 * batch that fails to send is retried under the same id (so the tokens service folds it once
 * even if an attempt did land); an outage is logged when it starts and when it ends, with
 * how many records were lost, never per request.
 */
export class UsageRecorder {
  readonly #send: (batch: UsageBatch) => Promise<void>;
  readonly #logger: Logger;
  readonly #flushEveryMs: number;
  readonly #maxBatch: number;
  readonly #retryDelaysMs: number[];
  readonly #maxPendingBatches: number;
  readonly #pending = new Set<Promise<void>>();
  #records: UsageRecord[] = [];
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

  record(record: UsageRecord): void {
    this.#records.push(record);
    if (this.#records.length >= this.#maxBatch) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.#flushEveryMs).unref();
  }

  /** Sends the records collected so far now. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#records.length === 0) return;
    const batch: UsageBatch = { id: randomUUID(), records: this.#records };
    this.#records = [];
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
          this.#logger.info({ lost_records: this.#lost }, 'usage records reach the bus again');
          this.#lost = 0;
        }
        return;
      } catch (err) {
        if (!this.#failing) {
          this.#failing = true;
          this.#logger.warn({ err }, 'usage records cannot be sent to the bus; retrying');
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
    if (this.#lost === 0) this.#logger.error('usage records are being lost: the bus has not taken them');
    this.#lost += batch.records.length;
  }
}
