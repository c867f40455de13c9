import { FINISHED_JOB_STATUSES, type JobCounts, type JobStatus, type RowErrorRecord } from '@supply/contracts';
import type { Collection, Doc, Store } from '@supply/kit';

export { JOB_STATUSES, MAX_JOB_ERRORS, type JobCounts, type JobStatus, type RowErrorRecord } from '@supply/contracts';
export const FINISHED = FINISHED_JOB_STATUSES;

export const ZERO_COUNTS: JobCounts = { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };

/**
 * Where a sync job is. `loading` validates and applies each chunk in one pass
 * (continue_on_error); `validating` then `applying` is the all-or-nothing path: nothing is
 * applied until every chunk is known valid. `deleting` is the replace step.
 */
export type SyncPhase = 'validating' | 'loading' | 'applying' | 'deleting' | 'done';

export interface SyncOptions {
  allow_record_creation: boolean;
  allow_record_update: boolean;
  continue_on_error: boolean;
}

/** A sync job's plan and its fold state. */
export interface SyncState {
  entity: 'sales' | 'inventory';
  mode: 'upsert' | 'replace';
  /** Replace scope as given (names) and resolved (ids per scope field). */
  scope: Record<string, string> | null;
  scope_ids: Record<string, number[]> | null;
  options: SyncOptions;
  /** Where rows sit in the request (`data` / `payload`), for error paths. */
  rows_path: string;
  upload: string;
  chunks: number;
  /** File imports: the row field of each column (null = ignored). */
  columns: Array<string | null> | null;
  phase: SyncPhase;
  /** The phase whose messages are all on the bus; dispatch repeats until it equals `phase`. */
  dispatched: SyncPhase | null;
  validated: number;
  invalid_rows: number;
  applied: number;
  failed_chunks: number;
  /** Why chunks failed (a few), for the job's message. */
  failures: string[];
  lock: string | null;
  /** Staged rows, plans and the scope lock released after the job finished. */
  cleaned: boolean;
  /**
   * The Idempotency-Key claim the job was created under and the request's fingerprint, so a
   * key whose answer could not be kept still replays this job instead of loading again.
   */
  idempotency?: { claim_id: string; fingerprint: string };
}

/** A job; its integer id is also the legacy `job_log_id`. */
export interface JobDoc extends Doc {
  _id: number;
  tenant: string;
  kind: string;
  status: JobStatus;
  token_id: number;
  user_id: number;
  progress: { processed: number; total: number };
  result: JobCounts;
  errors: RowErrorRecord[];
  errors_count: number;
  message: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Compare-and-set version: each write of the record is conditional on the one it read. */
  version: number;
  /** Units of work already counted (event parts, sync chunk steps): a redelivery counts once. */
  parts: string[];
  /** True once a `finished` event named the status; otherwise the status follows the counts. */
  status_reported?: boolean;
  /** A `finished` event that came before all the parts it announced; applied when the last one is counted. */
  pending_finish?: { status: string; message: string; parts: number } | null;
  /** Set when the sweeper ended the job because its parts stopped moving: why, and the rows it counted failed for that. */
  stalled?: { reason: string; failed: number } | null;
  sync: SyncState | null;
  /** The span of the request that created the job (a `traceparent`), kept while tracing is on so parts sent later link to it. */
  trace_root?: string;
}

export type Jobs = Collection<JobDoc>;

export function openJobs(store: Store): Promise<Jobs> {
  return store.collection<JobDoc>({
    name: 'jobs',
    autoIncrement: true,
    indexes: [
      {
        name: 'tenant_status',
        keys: [
          ['tenant', 1],
          ['status', 1],
          ['_id', 1],
        ],
      },
      {
        name: 'status',
        keys: [
          ['status', 1],
          ['_id', 1],
        ],
      },
    ],
  });
}

/** ISO 8601 UTC with microseconds, as the API shows every timestamp. */
export function timestamp(at: Date = new Date()): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
