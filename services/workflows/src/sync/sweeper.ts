/**
 * Periodic repairs, each safe to repeat and to run in several processes at once:
 * - unfinished sync jobs whose current phase is not (fully) on the bus get it dispatched
 *   (a process died between committing a job or a phase and sending its messages);
 * - chunk messages in the dead-letter queue whose job still waits for them are reported
 *   failed (a worker died during the last allowed delivery, so it could not report it);
 * - idempotency keys past their 24 hours and uploads abandoned half way are dropped.
 */
import type { Bus, Logger } from '@supply/kit';
import type { IdempotencyKeys } from '../idempotency/keys';
import type { JobRecords } from '../jobs/records';
import { FINISHED, timestamp } from '../jobs/repository';
import { CHUNKS_QUEUE, type ChunkMessage, type Dispatcher } from './dispatch';
import { discardUpload, type Staging } from './staging';
import type { ChunkWorker } from './worker';

const SWEEP_INTERVAL_MS = 15_000;
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
    },
  ) {}

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
          this.schedule(SWEEP_INTERVAL_MS);
        });
    }, ms);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    const { jobs, staging, keys, dispatcher, worker, bus } = this.deps;
    for (const job of await jobs.jobs.find({ status: { $in: ['queued', 'running'] } }, { sort: [['status', 1], ['_id', 1]] })) {
      if (this.stopped) return;
      if (job.sync) await dispatcher.act(job);
    }
    for (const { body } of await bus.deadLetters<ChunkMessage>(CHUNKS_QUEUE, 500)) {
      if (this.stopped) return;
      const job = typeof body?.job_id === 'number' ? await jobs.jobs.findById(body.job_id) : null;
      if (job?.sync && !FINISHED.includes(job.status) && job.tenant === body.tenant) {
        await worker.reportFailure(job, body, new Error('its last delivery did not finish'));
      }
    }
    await keys.sweep();
    const cutoff = timestamp(new Date(Date.now() - ABANDONED_UPLOAD_MS));
    for (const upload of await staging.uploads.find({ state: 'receiving', updated_at: { $lt: cutoff } }, { limit: 100 })) {
      await discardUpload(staging, upload._id);
    }
  }
}
