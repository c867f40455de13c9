/**
 * Moves sync jobs along after each fold: puts the messages of the phase the job entered
 * on the bus (then marks the phase dispatched), and once the job has finished, releases
 * its scope lock and drops its staged rows. Every step checks the record first and is
 * safe to repeat, so running it again after a crash, or from the sweeper, does no harm.
 */
import { queue } from '@supply/contracts';
import { jobRootHeaders, type Bus, type Logger } from '@supply/kit';
import type { JobRecords } from '../jobs/records';
import { timestamp, type JobDoc, type SyncPhase } from '../jobs/repository';
import type { ScopeLocks } from './scope-locks';
import { discardUpload, type Staging } from './staging';

/** The durable work queue of sync chunks (the bus namespace prefixes it). */
export const CHUNKS_QUEUE = queue<ChunkMessage>('workflows.sync-chunks');

export type ChunkStep = 'validate' | 'load' | 'apply' | 'delete';

export interface ChunkMessage {
  job_id: number;
  tenant: string;
  step: ChunkStep;
  seq: number;
}

const STEP_OF: Partial<Record<SyncPhase, ChunkStep>> = { validating: 'validate', loading: 'load', applying: 'apply', deleting: 'delete' };
/** How long a finished sync keeps the staged rows of its dead-lettered chunks, for an operator's replay. */
export const DEAD_LETTER_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Sends in flight at once while dispatching a phase. */
const SEND_WINDOW = 64;

export class Dispatcher {
  constructor(
    private readonly bus: Bus,
    private readonly jobs: JobRecords,
    private readonly staging: Staging,
    private readonly locks: ScopeLocks,
    private readonly logger: Logger,
  ) {}

  /** Does whatever the job's current state still needs from outside the record. */
  async act(job: JobDoc): Promise<void> {
    const sync = job.sync;
    if (!sync) return;
    if (sync.phase === 'done') {
      if (!sync.cleaned) await this.cleanUp(job);
      return;
    }
    if (sync.dispatched !== sync.phase) await this.dispatch(job, sync.phase);
  }

  private async dispatch(job: JobDoc, phase: SyncPhase): Promise<void> {
    const step = STEP_OF[phase]!;
    const count = step === 'delete' ? 1 : job.sync!.chunks;
    // Phases are dispatched by later events or the sweeper: the job's record names its root span.
    const headers = jobRootHeaders(job.trace_root);
    for (let from = 0; from < count; from += SEND_WINDOW) {
      const sends: Promise<void>[] = [];
      for (let seq = from; seq < Math.min(count, from + SEND_WINDOW); seq++) {
        const message: ChunkMessage = { job_id: job._id, tenant: job.tenant, step, seq };
        sends.push(this.bus.send(CHUNKS_QUEUE, message, { messageId: `${job._id}:${step}:${seq}`, ...(headers && { headers }) }));
      }
      await Promise.all(sends);
    }
    await this.jobs.update(job._id, (current) => {
      if (current.sync?.phase !== phase || current.sync.dispatched === phase) return null;
      return { ...current, sync: { ...current.sync, dispatched: phase } };
    });
    this.logger.debug({ job: job._id, phase, messages: count }, 'sync phase dispatched');
  }

  private async cleanUp(job: JobDoc): Promise<void> {
    const sync = job.sync!;
    if (sync.lock) await this.locks.release(sync.lock, job._id);
    if (sync.failed_chunks > 0) {
      // Its dead-lettered chunks can be replayed for a while: their rows stay until the sweeper drops them.
      const until = timestamp(new Date(Date.now() + DEAD_LETTER_RETENTION_MS));
      await this.staging.uploads.updateOne({ _id: sync.upload, retain_until: { $exists: false } }, { $set: { retain_until: until } });
    } else await discardUpload(this.staging, sync.upload);
    await this.jobs.update(job._id, (current) =>
      current.sync && !current.sync.cleaned ? { ...current, sync: { ...current.sync, cleaned: true } } : null,
    );
  }
}
