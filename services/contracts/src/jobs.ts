/**
 * Jobs as every service sees them: the workflows service keeps the job record (one id space for
 * `job_id` and `job_log_id`); a service that registered a job with CreateJob reports its work as
 * events on `JOB_EVENTS_QUEUE`, which workflows folds into the record.
 */
import { queue } from './queues';

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'partially_succeeded', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINISHED_JOB_STATUSES: readonly JobStatus[] = ['succeeded', 'partially_succeeded', 'failed'];

/** Errors a job keeps (the first ones by row); `errors_count` counts them all. */
export const MAX_JOB_ERRORS = 1000;

export interface RowErrorRecord {
  row: number;
  field: string;
  message: string;
}

export interface JobCounts {
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  failed: number;
}

interface JobEventBase {
  job_id: number;
  tenant: string;
}

/** What a job counted for one part (workflows.proto, PartOutcome). */
export interface PartOutcome {
  processed?: number;
  result?: Partial<JobCounts>;
  errors?: RowErrorRecord[];
  errors_count?: number;
}

/** What a service reports about a job it registered (see workflows.proto, JobEvent). */
export type ExternalJobEvent = JobEventBase &
  (
    | { type: 'started'; total?: number }
    | ({
        type: 'part';
        part: string;
        /** 0 (or absent): the part's first outcome; n: its outcome after the n-th replay of its dead letter. */
        revision?: number;
        /** With a revision: the outcome counted for the part before, which this one replaces. */
        replaces?: PartOutcome;
      } & PartOutcome)
    | {
        type: 'finished';
        status?: string;
        message?: string;
        /** The number of `part` events the job gets in all: it finishes once that many are counted, in whatever order events arrive. */
        parts?: number;
      }
  );

/** The durable work queue job events travel on (the bus namespace prefixes it). */
export const JOB_EVENTS_QUEUE = queue<ExternalJobEvent>('workflows.job-events');
