/**
 * Periodic repairs, each safe to repeat and to run in several processes at once:
 * - unfinished sync jobs whose current phase is not (fully) on the bus get it dispatched
 *   (a process died between committing a job or a phase and sending its messages);
 * - chunk messages in the dead-letter queue whose job still waits for them are reported
 *   failed (a worker died during the last allowed delivery, so it could not report it);
 * - a job whose record has not changed for the outage window (plus a grace) is ended, never
 *   left running: its workers are gone or its parts were lost without a report;
 * - idempotency keys past their 24 hours, uploads abandoned half way, and the rows a finished
 *   job kept for replaying its dead-lettered chunks (24 hours) are dropped.
 */
import { unfinishedDelivery, type Bus, type Logger } from '@supply/kit';
import type { IdempotencyKeys } from '../idempotency/keys';
import type { JobRecords } from '../jobs/records';
import { endStalled } from '../jobs/fold';
import { FINISHED, timestamp } from '../jobs/repository';
import { CHUNKS_QUEUE, type Dispatcher } from './dispatch';
import { discardUpload, type Staging } from './staging';
import type { ChunkWorker } from './worker';

const SWEEP_INTERVAL_MS = 15_000;
/** Beyond the outage window a job may sit still this much longer (at most), so a part retried until the window's end can still report. */
const STALL_GRACE_MS = 60_000;

/** How long a job may go without any change before the sweeper ends it. */
export function stallAfterMs(outageWindowMs: number): number {
  return outageWindowMs + Math.min(outageWindowMs, STALL_GRACE_MS);
}
/** An upload still receiving after this long lost its request. */
const ABANDONED_UPLOAD_MS = 60 * 60 * 1000;

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly deps: {
      jobs: JobRecords;
      staging: Staging;
      keys: IdempotencyKeys;
      dispatcher: Dispatcher;
      worker: ChunkWorker;
      bus: Bus;
      logger: Logger;
      outageWindowMs: number;
      /** The clock (epoch ms); tests pass their own. */
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** Short windows (tests, small deployments) are swept more often, so a stall ends soon after it is due. */
  private interval(): number {
    return Math.max(1_000, Math.min(SWEEP_INTERVAL_MS, Math.floor(this.deps.outageWindowMs / 4)));
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'sweep failed; retrying later'))
        .finally(() => {
          this.running = null;
          this.schedule(this.interval());
        });
    }, ms);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    const { jobs, staging, keys, dispatcher, worker, bus } = this.deps;
    for (const job of await jobs.jobs.find(
      { status: { $in: ['queued', 'running'] } },
      {
        sort: [
          ['status', 1],
          ['_id', 1],
        ],
      },
    )) {
      if (this.stopped) return;
      if (job.sync) await dispatcher.act(job);
    }
    for (const { body } of await bus.deadLetters(CHUNKS_QUEUE, 500)) {
      if (this.stopped) return;
      const job = typeof body?.job_id === 'number' ? await jobs.jobs.findById(body.job_id) : null;
      if (job?.sync && !FINISHED.includes(job.status) && job.tenant === body.tenant) {
        await worker.reportFailure(job, body, unfinishedDelivery());
      }
    }
    await this.endStalled();
    await keys.sweep(this.now());
    const cutoff = timestamp(new Date(this.now() - ABANDONED_UPLOAD_MS));
    for (const upload of await staging.uploads.find({ state: 'receiving', updated_at: { $lt: cutoff } }, { limit: 100 })) {
      await discardUpload(staging, upload._id);
    }
    // Rows kept for replaying a finished job's dead-lettered chunks, past their retention.
    for (const upload of await staging.uploads.find({ retain_until: { $lt: timestamp(new Date(this.now())) } }, { limit: 100 })) {
      await discardUpload(staging, upload._id);
    }
  }

  /** Ends every unfinished job that has not changed for stallAfterMs, then lets its sync clean up. */
  async endStalled(): Promise<number> {
    const { jobs, dispatcher, logger } = this.deps;
    const idleMs = stallAfterMs(this.deps.outageWindowMs);
    const now = this.now();
    const cutoff = timestamp(new Date(now - idleMs));
    let ended = 0;
    const stale = await jobs.jobs.find(
      { status: { $in: ['queued', 'running'] }, updated_at: { $lt: cutoff } },
      { sort: [['_id', 1]], limit: 500 },
    );
    for (const candidate of stale) {
      if (this.stopped) break;
      const { job, changed } = await jobs.update(candidate._id, (current) => endStalled(current, cutoff, timestamp(new Date(now)), idleMs));
      if (!job || !changed) continue;
      ended++;
      logger.warn({ job: job._id, kind: job.kind, status: job.status, idle_ms: idleMs }, 'job stalled; ended');
      jobs.observer?.finished(job);
      await dispatcher.act(job);
    }
    return ended;
  }
}
