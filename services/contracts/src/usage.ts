/**
 * What the gateway sends for metered requests: usage records in batches, over the bus
 * work queue `USAGE_QUEUE`, to the tokens service, which folds them into daily aggregates.
 * A batch's id is its bus message id; a redelivered batch is folded once.
 */
import { queue } from './queues';

export interface UsageRecord {
  /** Unique per request. */
  id: string;
  /** The X-Request-Id the client saw; a client may repeat its own, so it is not the key. */
  request_id: string;
  tenant: string;
  token_id: number;
  method: string;
  /** Route pattern below `/{tenant}/api/v1`, e.g. `/items/{id}`. */
  endpoint: string;
  /** Credits spent. */
  cost: number;
  /** HTTP status answered (499 when the client went away first). */
  status: number;
  /** ISO 8601 instant the request was metered, on the gateway's clock. */
  at: string;
}

export interface UsageBatch {
  /** Unique per batch, and the bus message id. */
  id: string;
  records: UsageRecord[];
}

/** The gateway's usage batches, consumed by the tokens service. */
export const USAGE_QUEUE = queue<UsageBatch>('tokens.usage');

/** How `GET /usage` may group its rows. */
export const USAGE_GROUPS = ['day', 'endpoint', 'token'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
/** Longest `GET /usage` range, in days. */
export const MAX_USAGE_DAYS = 366;

/** Most records one batch carries. */
export const MAX_BATCH_RECORDS = 1_000;

function isUsageRecord(value: unknown): value is UsageRecord {
  const r = value as Partial<UsageRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.id === 'string' &&
    typeof r.request_id === 'string' &&
    typeof r.tenant === 'string' &&
    r.tenant.length > 0 &&
    Number.isSafeInteger(r.token_id) &&
    typeof r.method === 'string' &&
    typeof r.endpoint === 'string' &&
    Number.isSafeInteger(r.cost) &&
    r.cost! >= 0 &&
    Number.isSafeInteger(r.status) &&
    typeof r.at === 'string' &&
    !Number.isNaN(Date.parse(r.at))
  );
}

/** Whether a bus message has the shape the gateway sends; anything else is dropped, not retried. */
export function isUsageBatch(value: unknown): value is UsageBatch {
  const b = value as Partial<UsageBatch> | null;
  return (
    typeof b === 'object' &&
    b !== null &&
    typeof b.id === 'string' &&
    b.id.length > 0 &&
    b.id.length <= 128 &&
    Array.isArray(b.records) &&
    b.records.length <= MAX_BATCH_RECORDS &&
    b.records.every(isUsageRecord)
  );
}
