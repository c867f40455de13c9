/**
 * The job state machine, in one place: the statuses a job moves through and, for a sync, the
 * phases of its work. The fold (fold.ts) changes a job's status or phase only through these
 * functions, so a move the table does not allow is a bug that fails loudly, never a job in a
 * state no client was promised.
 */
import type { JobStatus } from '@supply/contracts';
import type { SyncPhase } from './repository';

const FINISHED: readonly JobStatus[] = ['succeeded', 'partially_succeeded', 'failed'];

/**
 * Where each status may go. A job starts `queued`, runs, and finishes once. A finished job's
 * status may still be corrected to another finished one by a report that arrives late (a part
 * folded after `finished`, or a chunk's report after the sweeper ended a stalled job), so its
 * status always follows its counts; it never runs again.
 */
export const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  queued: ['running', 'failed'],
  running: FINISHED,
  succeeded: ['partially_succeeded', 'failed'],
  partially_succeeded: ['succeeded', 'failed'],
  failed: ['succeeded', 'partially_succeeded'],
};

/**
 * The phases of a sync. With continue_on_error a sync `loading`s (validates and applies each
 * chunk in one pass); without it, it is `validating` every chunk before `applying` any (all or
 * nothing). A replace then runs `deleting` (the records of the scope not in the load); every
 * path ends `done`, which is also where a job that ends early (invalid rows, a stall) goes.
 */
export const SYNC_TRANSITIONS: Readonly<Record<SyncPhase, readonly SyncPhase[]>> = {
  validating: ['applying', 'done'],
  loading: ['deleting', 'done'],
  applying: ['deleting', 'done'],
  deleting: ['done'],
  done: [],
};

export function isFinishedStatus(status: JobStatus): boolean {
  return FINISHED.includes(status);
}

/** Moves the job to `to` (staying put is always allowed); throws on a move the table does not allow. */
export function moveJob(job: { status: JobStatus }, to: JobStatus): void {
  if (job.status === to) return;
  if (!JOB_TRANSITIONS[job.status].includes(to)) throw new Error(`A job cannot go from ${job.status} to ${to}.`);
  job.status = to;
}

/** Moves the sync to phase `to` (staying put is always allowed); throws on a move the table does not allow. */
export function moveSync(sync: { phase: SyncPhase }, to: SyncPhase): void {
  if (sync.phase === to) return;
  if (!SYNC_TRANSITIONS[sync.phase].includes(to)) throw new Error(`A sync cannot go from ${sync.phase} to ${to}.`);
  sync.phase = to;
}
