import type { Collection, Doc, Store } from '@supply/kit';
import type { UsageRecord } from '@supply/contracts';

/** A batch of usage records as the gateway sent it; `_id` is the batch id (the bus message id). */
export interface UsageBatchDoc extends Doc {
  _id: string;
  /** The earliest record's instant, for pruning. */
  at: string;
  /**
   * The records as JSON text: kept whole and never queried, and one string costs far less to
   * store, copy and rewrite (marking the batch folded rewrites its document) than hundreds of
   * small objects.
   */
  records_json?: string;
  /** The records as objects, as batches stored before `records_json` hold them. */
  records?: UsageRecord[];
  /** Set once every record is counted in its day aggregate. */
  folded: boolean;
}

/** Requests and credits of one tenant, day, endpoint and token. */
export interface UsageDayDoc extends Doc {
  _id: string;
  tenant: string;
  day: string;
  method: string;
  endpoint: string;
  token_id: number;
  requests: number;
  credits: number;
  /** Requests answered with status 400 or above. */
  errors: number;
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
