import type { Collection, Doc, Store } from '@supply/kit';
import type { UsageRecord, UsageTotal } from '@supply/contracts';

/**
 * A usage batch as the gateway sent it; `_id` is the batch id (the bus message id). Its content
 * is kept as JSON text: never queried, and one string costs far less to store, copy and rewrite
 * (marking the batch folded rewrites its document) than many small objects.
 */
export interface UsageBatchDoc extends Doc {
  _id: string;
  /** The earliest instant it counts (a record's, or the start of a total's day), for pruning. */
  at: string;
  /** Its totals (what gateways send). */
  totals_json?: string;
  /** Per-request records, as batches sent by earlier gateways hold them. */
  records_json?: string;
  /** The records as objects, as batches stored before `records_json` hold them. */
  records?: UsageRecord[];
  /** Set once everything it counts is in its day aggregates. */
  folded: boolean;
}

/** Requests and credits of one tenant, day, method, endpoint and token: the sum of every total counted here. */
export interface UsageDayDoc extends Doc, UsageTotal {
  _id: string;
  /** The latest batches counted here: a batch retried after a partial fold skips what it counted. */
  recent: string[];
}

export interface UsageStore {
  batches: Collection<UsageBatchDoc>;
  days: Collection<UsageDayDoc>;
}

export async function openUsageStore(store: Store): Promise<UsageStore> {
  const [batches, days] = await Promise.all([
    store.collection<UsageBatchDoc>({
      name: 'usage_batches',
      indexes: [
        {
          name: 'folded_at',
          keys: [
            ['folded', 1],
            ['at', 1],
          ],
        },
      ],
    }),
    store.collection<UsageDayDoc>({
      name: 'usage_days',
      indexes: [
        {
          name: 'tenant_day',
          keys: [
            ['tenant', 1],
            ['day', 1],
          ],
        },
      ],
    }),
  ]);
  return { batches, days };
}

export function usageDayId(r: Pick<UsageDayDoc, 'tenant' | 'day' | 'method' | 'endpoint' | 'token_id'>): string {
  return `${r.tenant} ${r.day} ${r.method} ${r.endpoint} ${r.token_id}`;
}
