import { isAppError } from '@supply/kit';
import { utcDay, type CreditPeriod, type UsageBatch, type UsageGroup, type UsageRecord } from '@supply/contracts';
import { usageDayId, type UsageBatchDoc, type UsageDayDoc, type UsageStore } from './repository';

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

type DayTotals = Pick<UsageDayDoc, 'tenant' | 'day' | 'method' | 'endpoint' | 'token_id' | 'requests' | 'credits' | 'errors'>;

/** The UTC day of a record's instant; the gateway's own form (`toISOString`, UTC) is read as it is. */
function dayOf(at: string): string {
  return at.length === 24 && at.charCodeAt(10) === 84 /* T */ && at.charCodeAt(23) === 90 /* Z */ ? at.slice(0, 10) : utcDay(new Date(at));
}

/** A batch's stored records, in either form (see UsageBatchDoc). */
function recordsOf(stored: UsageBatchDoc): UsageRecord[] {
  return stored.records_json !== undefined ? (JSON.parse(stored.records_json) as UsageRecord[]) : (stored.records ?? []);
}

/** A batch's records summed per aggregate (tenant, day, endpoint, token). */
function totalsOf(batch: UsageBatch): Map<string, DayTotals> {
  const totals = new Map<string, DayTotals>();
  for (const r of batch.records) {
    const key = { tenant: r.tenant, day: dayOf(r.at), method: r.method, endpoint: r.endpoint, token_id: r.token_id };
    const id = usageDayId(key);
    const into = totals.get(id) ?? totals.set(id, { ...key, requests: 0, credits: 0, errors: 0 }).get(id)!;
    into.requests += 1;
    into.credits += r.cost;
    if (r.status >= 400) into.errors += 1;
  }
  return totals;
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
    const at = batch.records.reduce((min, r) => (r.at < min ? r.at : min), batch.records[0]?.at ?? new Date(0).toISOString());
    try {
      await this.#store.batches.insertOne({ _id: batch.id, at, records_json: JSON.stringify(batch.records), folded: false });
    } catch (error) {
      if (!(isAppError(error) && error.code === 'conflict')) throw error;
      const stored = await this.#store.batches.findById(batch.id);
      if (!stored || stored.folded) return false;
    }
    await this.#count(batch);
    return true;
  }

  /** Folds batches stored but never marked folded (their messages died or were lost); returns how many. */
  async recover(): Promise<number> {
    let folded = 0;
    for await (const stored of this.#store.batches.iterate({ folded: false })) {
      await this.#count({ id: stored._id, records: recordsOf(stored) });
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

  /** Drops folded batches whose records are all older than `before`; the aggregates stay. */
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
