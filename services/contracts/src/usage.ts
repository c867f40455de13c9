/**
 * What the gateway sends for metered requests: sums of its requests per tenant, UTC day,
 * method, endpoint and token, in batches over the bus work queue `USAGE_QUEUE`, to the tokens
 * service, which folds them into its daily aggregates. A batch's id is its bus message id; a
 * redelivered batch is folded once.
 */
import { queue } from './queues';

/** The requests of one tenant, UTC day, method, endpoint and token that one batch counts. */
export interface UsageTotal {
  tenant: string;
  /** UTC day the requests were metered on, `YYYY-MM-DD` (the gateway's clock). */
  day: string;
  method: string;
  /** Route pattern below `/{tenant}/api/v1`, e.g. `/items/{id}`. */
  endpoint: string;
  token_id: number;
  /** Requests counted (at least 1). */
  requests: number;
  /** Credits they spent (a refunded request adds 0). */
  credits: number;
  /** How many were answered with status 400 or above (499 when the client went away first). */
  errors: number;
}

/**
 * One metered request, as gateways before the sums sent them (one per request). The tokens
 * service still folds batches of these (a message queued across an upgrade, a batch stored
 * unfolded by an earlier version).
 */
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

/** Exactly one of `totals` (what gateways send) and `records` (what earlier gateways sent). */
export interface UsageBatch {
  /** Unique per batch, and the bus message id. */
  id: string;
  totals?: UsageTotal[];
  records?: UsageRecord[];
}

/** The gateway's usage batches (totals), consumed by the tokens service. */
export const USAGE_QUEUE = queue<UsageBatch>('tokens.usage-totals');
/**
 * Where gateways before the totals sent their per-request records; the tokens service still
 * drains it. The totals go to a queue of their own so that, during an upgrade, a tokens service
 * of the earlier version (which takes only records and drops any other shape) never takes them:
 * they wait for the new version instead of being lost.
 */
export const RECORDS_USAGE_QUEUE = queue<UsageBatch>('tokens.usage');

/** How `GET /usage` may group its rows. */
export const USAGE_GROUPS = ['day', 'endpoint', 'token'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
/** Longest `GET /usage` range, in days. */
export const MAX_USAGE_DAYS = 366;

/** Most totals (or records) one batch carries. */
export const MAX_BATCH_RECORDS = 1_000;

const USAGE_DAY = /^\d{4}-\d{2}-\d{2}$/;

const count = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

function isUsageTotal(value: unknown): value is UsageTotal {
  const t = value as Partial<UsageTotal> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.tenant === 'string' &&
    t.tenant.length > 0 &&
    typeof t.day === 'string' &&
    USAGE_DAY.test(t.day) &&
    typeof t.method === 'string' &&
    typeof t.endpoint === 'string' &&
    Number.isSafeInteger(t.token_id) &&
    count(t.requests) &&
    t.requests >= 1 &&
    count(t.credits) &&
    count(t.errors) &&
    t.errors <= t.requests
  );
}

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
    (Array.isArray(b.totals)
      ? b.records === undefined && b.totals.length <= MAX_BATCH_RECORDS && b.totals.every(isUsageTotal)
      : Array.isArray(b.records) && b.records.length <= MAX_BATCH_RECORDS && b.records.every(isUsageRecord))
  );
}
