import { isAppError } from '@supply/kit';
import { utcDay, type CreditPeriod, type UsageBatch, type UsageGroup, type UsageRecord, type UsageTotal } from '@supply/contracts';
import { usageDayId, type UsageBatchDoc, type UsageStore } from './repository';

/** Batch ids each aggregate remembers; a partly folded batch must be retried within this many later batches. */
const RECENT_BATCHES = 64;

export interface UsageRow {
  day: string | null;
  method: string | null;
  endpoint: string | null;
  token_id: number | null;
  requests: number;
  credits: number;
}

/** The UTC day of a record's instant; the gateway's own form (`toISOString`, UTC) is read as it is. */
function dayOf(at: string): string {
  return at.length === 24 && at.charCodeAt(10) === 84 /* T */ && at.charCodeAt(23) === 90 /* Z */ ? at.slice(0, 10) : utcDay(new Date(at));
}

/** A stored batch as the batch it was (see UsageBatchDoc for its forms). */
function batchOf(stored: UsageBatchDoc): UsageBatch {
  if (stored.totals_json !== undefined) return { id: stored._id, totals: JSON.parse(stored.totals_json) as UsageTotal[] };
  return {
    id: stored._id,
    records: stored.records_json !== undefined ? (JSON.parse(stored.records_json) as UsageRecord[]) : (stored.records ?? []),
  };
}

/** A batch summed per aggregate (tenant, day, method, endpoint, token), whether it carries totals or per-request records. */
function totalsOf(batch: UsageBatch): Map<string, UsageTotal> {
  const totals = new Map<string, UsageTotal>();
  const add = (key: Omit<UsageTotal, 'requests' | 'credits' | 'errors'>, requests: number, credits: number, errors: number) => {
    const id = usageDayId(key);
    const into = totals.get(id) ?? totals.set(id, { ...key, requests: 0, credits: 0, errors: 0 }).get(id)!;
    into.requests += requests;
    into.credits += credits;
    into.errors += errors;
  };
  for (const t of batch.totals ?? []) {
    add({ tenant: t.tenant, day: t.day, method: t.method, endpoint: t.endpoint, token_id: t.token_id }, t.requests, t.credits, t.errors);
  }
  for (const r of batch.records ?? []) {
    add(
      { tenant: r.tenant, day: dayOf(r.at), method: r.method, endpoint: r.endpoint, token_id: r.token_id },
      1,
      r.cost,
      r.status >= 400 ? 1 : 0,
    );
  }
  return totals;
}

/** The earliest instant a batch counts, for pruning: a record's own, or the start of a total's day. */
function earliestOf(batch: UsageBatch): string {
  let at: string | undefined;
  for (const t of batch.totals ?? []) {
    const start = `${t.day}T00:00:00.000Z`;
    if (at === undefined || start < at) at = start;
  }
  for (const r of batch.records ?? []) if (at === undefined || r.at < at) at = r.at;
  return at ?? new Date(0).toISOString();
}

/**
 * Usage batches and their per-day aggregates (tenant, day, endpoint, token).
 *
 * Folding a batch stores it under its id first: a batch found already folded is skipped,
 * so a redelivery counts nothing twice. Each aggregate's `$inc` is conditional on the
 * batch id not being among the aggregate's recent batches, and records the id in the same
 * atomic write; so a batch whose fold was cut short (a crash, a store error) is folded
 * again safely, counting only what it had not counted yet.
 */
export class UsageLedger {
  readonly #store: UsageStore;

  constructor(store: UsageStore) {
    this.#store = store;
  }

  /** Folds one batch; false when it had been folded already. */
  async fold(batch: UsageBatch): Promise<boolean> {
    const stored: UsageBatchDoc =
      batch.totals !== undefined
        ? { _id: batch.id, at: earliestOf(batch), totals_json: JSON.stringify(batch.totals), folded: false }
        : { _id: batch.id, at: earliestOf(batch), records_json: JSON.stringify(batch.records ?? []), folded: false };
    try {
      await this.#store.batches.insertOne(stored);
    } catch (error) {
      if (!(isAppError(error) && error.code === 'conflict')) throw error;
      const before = await this.#store.batches.findById(batch.id);
      if (!before || before.folded) return false;
    }
    await this.#count(batch);
    return true;
  }

  /** Folds batches stored but never marked folded (their messages died or were lost); returns how many. */
  async recover(): Promise<number> {
    let folded = 0;
    for await (const stored of this.#store.batches.iterate({ folded: false })) {
      await this.#count(batchOf(stored));
      folded++;
    }
    return folded;
  }

  /** Credits recorded in a period. */
  async used(tenant: string, period: CreditPeriod): Promise<number> {
    let credits = 0;
    for await (const day of this.#store.days.iterate({ tenant, day: { $gte: utcDay(period.start), $lt: utcDay(period.end) } })) {
      credits += day.credits;
    }
    return credits;
  }

  /** Requests and credits from `from` to `to` (inclusive days), summed over the dimensions not in `groupBy`. */
  async report(tenant: string, from: string, to: string, groupBy: readonly UsageGroup[]): Promise<UsageRow[]> {
    const by = new Set(groupBy);
    const rows = new Map<string, UsageRow>();
    for await (const day of this.#store.days.iterate({ tenant, day: { $gte: from, $lte: to } })) {
      const row: UsageRow = {
        day: by.has('day') ? day.day : null,
        method: by.has('endpoint') ? day.method : null,
        endpoint: by.has('endpoint') ? day.endpoint : null,
        token_id: by.has('token') ? day.token_id : null,
        requests: 0,
        credits: 0,
      };
      const key = JSON.stringify([row.day, row.endpoint, row.method, row.token_id]);
      const into = rows.get(key) ?? rows.set(key, row).get(key)!;
      into.requests += day.requests;
      into.credits += day.credits;
    }
    const order = (r: UsageRow) =>
      `${r.day ?? ''}\u0000${r.endpoint ?? ''}\u0000${r.method ?? ''}\u0000${String(r.token_id ?? 0).padStart(16, '0')}`;
    return [...rows.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  }

  /** Drops folded batches that count nothing on or after `before`; the aggregates stay. */
  async prune(before: Date): Promise<number> {
    return this.#store.batches.deleteMany({ folded: true, at: { $lt: before.toISOString() } });
  }

  async #count(batch: UsageBatch): Promise<void> {
    await Promise.all(
      [...totalsOf(batch)].map(async ([id, totals]) => {
        const { requests, credits, errors, ...key } = totals;
        try {
          await this.#store.days.updateOne(
            { _id: id, recent: { $ne: batch.id } },
            {
              $inc: { requests, credits, errors },
              $push: { recent: { $each: [batch.id], $slice: -RECENT_BATCHES } },
              $setOnInsert: key,
            },
            { upsert: true },
          );
        } catch (error) {
          // The aggregate exists and already lists this batch: the upsert found no match and clashed on `_id`.
          if (!(isAppError(error) && error.code === 'conflict')) throw error;
        }
      }),
    );
    await this.#store.batches.updateOne({ _id: batch.id }, { $set: { folded: true } });
  }
}
