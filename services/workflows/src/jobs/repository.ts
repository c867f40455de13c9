import type { Collection, Doc, Store } from '@supply/kit';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'partially_succeeded', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A job; its integer id is also the legacy `job_log_id`. */
export interface JobDoc extends Doc {
  _id: number;
  tenant: string;
  kind: string;
  status: JobStatus;
  token_id: number;
  user_id: number;
  progress: { processed: number; total: number };
  result: { created: number; updated: number; deleted: number; unchanged: number; failed: number };
  errors: Array<{ row: number; field: string; message: string }>;
  errors_count: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function openJobs(store: Store): Promise<Collection<JobDoc>> {
  return store.collection<JobDoc>({
    name: 'jobs',
    autoIncrement: true,
    indexes: [{ name: 'tenant_status', keys: [['tenant', 1], ['status', 1], ['_id', 1]] }],
  });
}
