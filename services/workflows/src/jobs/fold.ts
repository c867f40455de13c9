/**
 * Folding job events into the job record: a pure function of (record, event), so the
 * consumer can apply it under compare-and-set and a redelivered event changes nothing.
 */
import {
  FINISHED_JOB_STATUSES,
  JOB_EVENTS_QUEUE as EXTERNAL_JOB_EVENTS_QUEUE,
  type ExternalJobEvent,
  type PartOutcome,
  type Queue,
} from '@supply/contracts';
import { MAX_JOB_ERRORS, type JobCounts, type JobDoc, type JobStatus, type RowErrorRecord } from './repository';
import { isFinishedStatus, moveJob, moveSync } from './states';

interface EventBase {
  job_id: number;
  tenant: string;
}

/** What a sync chunk's step did: the body of its report, as its part ledger records it. */
export type SyncStepOutcome =
  | { type: 'chunk_validated'; seq: number; rows: number; invalid_rows: number; errors: RowErrorRecord[]; errors_count: number }
  | { type: 'chunk_applied'; seq: number; rows: number; result: JobCounts; errors: RowErrorRecord[]; errors_count: number }
  | {
      type: 'chunk_failed';
      seq: number;
      step: 'validate' | 'load' | 'apply' | 'delete';
      rows: number;
      message: string;
      /** The chunk's first row, so errors[] names the part (absent for delete). */
      first_row?: number;
      /** Rows of the chunk an earlier attempt did write (counted as such, not failed). */
      committed?: Partial<JobCounts>;
    }
  | { type: 'scope_deleted'; deleted: number };

/** A chunk's load: applied, or failed while loading or applying (what a replay may replace). */
type LoadOutcome = Extract<SyncStepOutcome, { type: 'chunk_applied' } | { type: 'chunk_failed' }>;

/**
 * Events the sync workers send about their own chunks. A load step replayed from the
 * dead-letter queue reports its revision and the outcome it replaces.
 */
export type SyncJobEvent = EventBase & SyncStepOutcome & { revision?: number; replaces?: SyncStepOutcome };

export type JobEvent = ExternalJobEvent | SyncJobEvent;

/** The job events queue as workflows uses it: other services' events (the contract) and its own sync workers'. */
export const JOB_EVENTS_QUEUE: Queue<JobEvent> = EXTERNAL_JOB_EVENTS_QUEUE;

const MAX_FAILURE_NOTES = 5;

function isFinished(job: JobDoc): boolean {
  return isFinishedStatus(job.status);
}

/** Keeps the first MAX_JOB_ERRORS errors by row (then field), whatever order chunks finish in. */
export function mergeErrors(kept: RowErrorRecord[], more: RowErrorRecord[]): RowErrorRecord[] {
  if (more.length === 0) return kept;
  return [...kept, ...more].sort((a, b) => a.row - b.row || (a.field < b.field ? -1 : a.field > b.field ? 1 : 0)).slice(0, MAX_JOB_ERRORS);
}

function addCounts(into: JobCounts, more: Partial<JobCounts> | undefined): void {
  if (!more) return;
  for (const key of Object.keys(into) as Array<keyof JobCounts>) {
    const n = Number(more[key] ?? 0);
    if (Number.isFinite(n) && n > 0) into[key] += n;
  }
}

function start(job: JobDoc, now: string): void {
  if (job.status === 'queued') {
    moveJob(job, 'running');
    job.started_at ??= now;
  }
}

/** The part name under which an event is counted, so each unit of work counts once. */
function partOf(event: JobEvent): string | null {
  switch (event.type) {
    case 'part':
      return event.revision ? `p:${event.part}#${event.revision}` : `p:${event.part}`;
    case 'chunk_validated':
      return `v${event.seq}`;
    case 'chunk_applied':
      return event.revision ? `a${event.seq}#${event.revision}` : `a${event.seq}`;
    case 'chunk_failed':
      if (event.step === 'delete') return 'd';
      if (event.step === 'validate') return `v${event.seq}`;
      return event.revision ? `a${event.seq}#${event.revision}` : `a${event.seq}`;
    case 'scope_deleted':
      return 'd';
    default:
      return null;
  }
}

/** The status a finished job gets from its counts, unless the reporter named one. */
export function derivedStatus(job: JobDoc): JobStatus {
  const { created, updated, deleted, unchanged, failed } = job.result;
  const chunkFailures = job.sync?.failed_chunks ?? 0;
  if (failed === 0 && chunkFailures === 0) return 'succeeded';
  return created + updated + deleted + unchanged > 0 ? 'partially_succeeded' : 'failed';
}

function finish(job: JobDoc, now: string, status: JobStatus, message: string): void {
  moveJob(job, status);
  job.message = message;
  job.finished_at = now;
  if (job.started_at === null) job.started_at = now;
  if (job.sync) moveSync(job.sync, 'done');
}

/** `part` events counted so far (a replayed part's revisions count as the part). */
function countedParts(job: JobDoc): number {
  return job.parts.filter((p) => p.startsWith('p:') && !p.includes('#')).length;
}

function isLoadOutcome(outcome: SyncStepOutcome | undefined): outcome is LoadOutcome {
  return outcome?.type === 'chunk_applied' || (outcome?.type === 'chunk_failed' && (outcome.step === 'load' || outcome.step === 'apply'));
}

/** A sync chunk's load replayed from the dead-letter queue (revision > 0). */
function replayedLoad(event: JobEvent): (SyncJobEvent & LoadOutcome) | null {
  return 'revision' in event && event.revision && event.type !== 'part' && isLoadOutcome(event as SyncStepOutcome)
    ? (event as SyncJobEvent & LoadOutcome)
    : null;
}

function subtractCounts(from: JobCounts, counts: Partial<JobCounts> | undefined): void {
  for (const key of Object.keys(from) as Array<keyof JobCounts>) {
    const n = Number(counts?.[key] ?? 0);
    if (Number.isFinite(n) && n > 0) from[key] = Math.max(0, from[key] - n);
  }
}

function dropErrors(job: JobDoc, errors: readonly RowErrorRecord[]): void {
  const gone = new Set(errors.map((e) => `${e.row}\u0000${e.field}\u0000${e.message}`));
  if (gone.size > 0) job.errors = job.errors.filter((e) => !gone.has(`${e.row}\u0000${e.field}\u0000${e.message}`));
}

/** Rows of a failed load an earlier attempt did write, and the counts they are. */
function committedOf(event: Extract<SyncStepOutcome, { type: 'chunk_failed' }>): { stored: number; written: JobCounts } {
  const written = { created: 0, updated: 0, unchanged: 0, deleted: 0, failed: 0 };
  addCounts(written, event.committed);
  return { stored: Math.min(event.rows, written.created + written.updated + written.unchanged), written };
}

/** Takes back what a chunk's load added to the job (its replay adds its new outcome next). */
function reverseLoad(job: JobDoc, outcome: LoadOutcome): void {
  const sync = job.sync!;
  sync.applied = Math.max(0, sync.applied - 1);
  job.progress.processed = Math.max(0, job.progress.processed - outcome.rows);
  if (outcome.type === 'chunk_applied') {
    subtractCounts(job.result, outcome.result);
    dropErrors(job, outcome.errors);
    job.errors_count = Math.max(0, job.errors_count - outcome.errors_count);
    return;
  }
  sync.failed_chunks = Math.max(0, sync.failed_chunks - 1);
  sync.failures = sync.failures.filter((m) => m !== outcome.message);
  dropErrors(job, [{ row: outcome.first_row ?? 0, field: `chunk.${outcome.seq}`, message: outcome.message }]);
  job.errors_count = Math.max(0, job.errors_count - 1);
  const { stored, written } = committedOf(outcome);
  if (stored > 0) subtractCounts(job.result, written);
  job.result.failed = Math.max(0, job.result.failed - (outcome.rows - stored));
}

/** Takes back what the job counted for a part whose dead letter was replayed (its new outcome is added next). */
function takeBack(job: JobDoc, replaced: PartOutcome): void {
  job.progress.processed = Math.max(0, job.progress.processed - Math.max(0, Number(replaced.processed ?? 0)));
  subtractCounts(job.result, replaced.result);
  dropErrors(job, replaced.errors ?? []);
  job.errors_count = Math.max(0, job.errors_count - Math.max(replaced.errors_count ?? 0, replaced.errors?.length ?? 0));
}

function summaryOfPart(event: { processed?: number; result?: Partial<JobCounts> }): string {
  const counts = Object.entries(event.result ?? {})
    .filter(([, n]) => Number(n) > 0)
    .map(([k, n]) => `${n} ${k}`);
  return counts.length > 0 ? counts.join(', ') : `${event.processed ?? 0} processed`;
}

function finishAsReported(job: JobDoc, now: string, status: string, message: string): void {
  const reported = (FINISHED_JOB_STATUSES as readonly string[]).includes(status);
  job.status_reported = reported;
  finish(job, now, reported ? (status as JobStatus) : derivedStatus(job), message);
}

function loadSummary(job: JobDoc): string {
  const r = job.result;
  const parts = [`${r.created} created`, `${r.updated} updated`, `${r.unchanged} unchanged`];
  if (job.sync?.mode === 'replace') parts.push(`${r.deleted} deleted`);
  if (r.failed > 0) parts.push(`${r.failed} failed`);
  const failures = job.sync?.failures ?? [];
  return `${job.progress.processed} of ${job.progress.total} rows processed: ${parts.join(', ')}.${failures.length ? ` ${failures.join(' ')}` : ''}`;
}

/** Moves a sync job on once the phase it is in has heard from every chunk. */
function advanceSync(job: JobDoc, now: string): void {
  const sync = job.sync!;
  if (sync.phase === 'validating' && sync.validated >= sync.chunks) {
    if (sync.invalid_rows > 0 || sync.failed_chunks > 0) {
      job.result.failed = sync.invalid_rows;
      job.progress.processed = job.progress.total;
      const why =
        sync.failed_chunks > 0
          ? `Validation could not finish: ${sync.failures.join(' ')}`
          : `${sync.invalid_rows} of ${job.progress.total} rows are invalid`;
      finish(job, now, 'failed', `${why}; nothing was loaded (continue_on_error is false).`);
      return;
    }
    moveSync(sync, 'applying');
    sync.dispatched = null;
    return;
  }
  if ((sync.phase === 'loading' || sync.phase === 'applying') && sync.applied >= sync.chunks) {
    if (sync.mode === 'replace' && sync.failed_chunks === 0) {
      moveSync(sync, 'deleting');
      sync.dispatched = null;
      return;
    }
    if (sync.mode === 'replace') sync.failures.push('Nothing was deleted: a replace only deletes after every row was applied.');
    finish(job, now, derivedStatus(job), loadSummary(job));
    return;
  }
  if (sync.phase === 'deleting' && job.parts.includes('d')) {
    finish(job, now, derivedStatus(job), loadSummary(job));
  }
}

/** Stable start of the message of a job the sweeper ended (clients and alerts may match it). */
export const STALLED_REASON = 'Stalled: no part of this job was reported';

function storedRows(job: JobDoc): number {
  const { created, updated, deleted, unchanged } = job.result;
  return created + updated + deleted + unchanged;
}

/** A stalled job never claims success: it did not finish its work. */
function stalledStatus(job: JobDoc): JobStatus {
  return storedRows(job) > 0 ? 'partially_succeeded' : 'failed';
}

/**
 * The job ended because nothing about it changed since `cutoff` (its workers are gone, or
 * its parts were lost without a report), or null if it moved or already finished. A sync
 * counts the rows it has not processed as failed; a late report of them still folds in.
 */
export function endStalled(current: JobDoc, cutoff: string, now: string, idleMs: number): JobDoc | null {
  if (isFinished(current) || current.updated_at >= cutoff) return null;
  const job = structuredClone(current);
  const unprocessed = job.sync ? Math.max(0, job.progress.total - job.progress.processed) : 0;
  const reason = `${STALLED_REASON} for ${Math.round(idleMs / 1000)} s (its workers stopped or its parts were lost), so it was ended.`;
  job.result.failed += unprocessed;
  job.stalled = { reason, failed: unprocessed };
  job.pending_finish = null;
  job.errors = mergeErrors(job.errors, [{ row: 0, field: 'job', message: reason }]);
  job.errors_count++;
  if (job.sync?.mode === 'replace') {
    job.sync.failures.push(
      job.sync.phase === 'deleting'
        ? 'Deleting the records outside the load may not have finished.'
        : 'Nothing was deleted: a replace only deletes after every row was applied.',
    );
  }
  finish(job, now, stalledStatus(job), stalledMessage(job));
  job.status_reported = false;
  job.updated_at = now;
  return job;
}

function stalledMessage(job: JobDoc): string {
  const summary = job.sync ? loadSummary(job) : `${job.progress.processed} of ${job.progress.total} processed.`;
  return `${job.stalled!.reason} ${summary}`;
}

/** A sync chunk's report that arrives after the sweeper ended its job: its rows were counted failed, now they count as what happened. */
function lateAfterStall(job: JobDoc, event: JobEvent): boolean {
  if (!job.stalled || !job.sync || !isFinished(job)) return false;
  return event.type === 'chunk_applied' || (event.type === 'chunk_failed' && (event.step === 'load' || event.step === 'apply'));
}

/**
 * The record after `event`, or null when the event changes nothing (a part already
 * counted, a finished job, an event for another tenant).
 */
export function foldJobEvent(current: JobDoc, event: JobEvent, now: string): JobDoc | null {
  if (event.tenant !== current.tenant) return null;
  // Events from other services can arrive out of order: a part that lands after `finished`
  // still counts (once), and a status derived from the counts follows it.
  const lateExternalPart = event.type === 'part' && current.sync === null && isFinished(current);
  const replayed = current.sync ? replayedLoad(event) : null;
  const lateChunk = !replayed && lateAfterStall(current, event);
  if (isFinished(current) && !lateExternalPart && !lateChunk && !replayed) return null;
  const job = structuredClone(current);
  const part = partOf(event);
  if (part !== null) {
    if (job.parts.includes(part)) return null;
    job.parts.push(part);
  }
  if (event.type === 'part' && event.revision) {
    // A replayed dead letter: its outcome replaces the one counted for the part. If the part was
    // never counted, this outcome is its first; if it was, without what to take back, it stays.
    const base = `p:${event.part}`;
    if (job.parts.includes(base)) {
      if (!event.replaces) {
        job.updated_at = now;
        return job;
      }
      takeBack(job, event.replaces);
    } else job.parts.push(base);
    if (lateExternalPart) {
      job.status_reported = false;
      job.message = `${job.message ?? ''} Part ${event.part} was replayed (revision ${event.revision}): ${summaryOfPart(event)}.`.trim();
    }
  }
  if (replayed) {
    // A load replayed from the dead-letter queue: its outcome replaces the one counted for the
    // chunk (a load never counted is counted now, and its late first report is not).
    const base = `a${replayed.seq}`;
    if (job.parts.includes(base)) {
      if (!isLoadOutcome(replayed.replaces)) {
        job.updated_at = now;
        return job;
      }
      reverseLoad(job, replayed.replaces);
    } else job.parts.push(base);
  }
  start(job, now);
  switch (event.type) {
    case 'started':
      if (event.total && event.total > 0) job.progress.total = event.total;
      break;
    case 'part':
      job.progress.processed += Math.max(0, Number(event.processed ?? 0));
      addCounts(job.result, event.result);
      job.errors = mergeErrors(job.errors, (event.errors ?? []).slice(0, MAX_JOB_ERRORS));
      job.errors_count += Math.max(event.errors_count ?? 0, event.errors?.length ?? 0);
      if (lateExternalPart && job.stalled) {
        moveJob(job, stalledStatus(job));
        job.message = stalledMessage(job);
      } else if (lateExternalPart && !job.status_reported) moveJob(job, derivedStatus(job));
      if (job.pending_finish && countedParts(job) >= job.pending_finish.parts) {
        const pending = job.pending_finish;
        job.pending_finish = null;
        finishAsReported(job, now, pending.status, pending.message);
      }
      break;
    case 'finished': {
      const expected = Math.max(0, Math.floor(Number(event.parts ?? 0)) || 0);
      if (expected > countedParts(job)) {
        job.pending_finish = { status: event.status ?? '', message: event.message ?? '', parts: expected };
        break;
      }
      finishAsReported(job, now, event.status ?? '', event.message ?? '');
      break;
    }
    case 'chunk_validated':
      job.sync!.validated++;
      job.sync!.invalid_rows += event.invalid_rows;
      job.errors = mergeErrors(job.errors, event.errors);
      job.errors_count += event.errors_count;
      break;
    case 'chunk_applied':
      job.sync!.applied++;
      job.progress.processed += event.rows;
      addCounts(job.result, event.result);
      job.errors = mergeErrors(job.errors, event.errors);
      job.errors_count += event.errors_count;
      break;
    case 'chunk_failed': {
      const sync = job.sync!;
      sync.failed_chunks++;
      if (sync.failures.length < MAX_FAILURE_NOTES) sync.failures.push(event.message);
      const field = event.step === 'delete' ? 'delete' : `chunk.${event.seq}`;
      job.errors = mergeErrors(job.errors, [{ row: event.first_row ?? 0, field, message: event.message }]);
      job.errors_count++;
      if (event.step === 'validate') {
        sync.validated++;
        sync.invalid_rows += event.rows;
      } else if (event.step !== 'delete') {
        sync.applied++;
        job.progress.processed += event.rows;
        const { stored, written } = committedOf(event);
        if (stored > 0) addCounts(job.result, written);
        job.result.failed += event.rows - stored;
      }
      break;
    }
    case 'scope_deleted':
      job.result.deleted += event.deleted;
      break;
  }
  if (lateChunk && (event.type === 'chunk_applied' || event.type === 'chunk_failed')) {
    const released = Math.min(event.rows, job.stalled!.failed, job.result.failed);
    job.result.failed -= released;
    job.stalled = { ...job.stalled!, failed: job.stalled!.failed - released };
    moveJob(job, stalledStatus(job));
    job.message = stalledMessage(job);
  }
  if (replayed && isFinished(job)) {
    moveJob(job, job.stalled ? stalledStatus(job) : derivedStatus(job));
    job.status_reported = false;
    job.message = `${loadSummary(job)} Chunk ${replayed.seq} was replayed from the dead-letter queue (revision ${replayed.revision}).`;
  }
  if (job.sync && !isFinished(job)) advanceSync(job, now);
  job.updated_at = now;
  return job;
}
