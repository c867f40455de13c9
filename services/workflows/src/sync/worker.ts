/**
 * The sync worker: takes chunk messages off the bus, does the step, and reports it as a
 * job event. Delivery is at least once; every step is idempotent: the plan of a chunk is
 * kept from its first attempt, applying rows already applied changes nothing, and the
 * fold counts each chunk once. A chunk the bus gives up on (a permanent failure on its
 * last allowed delivery, or a dependency down for the whole outage window) is reported
 * failed, with its rows and a reason fit for the client, before it is dead-lettered.
 */
import { currentContext, failureReason, type Bus, type Clients, type Delivery, type Logger, type Metrics } from '@supply/kit';
import { JOB_EVENTS_QUEUE, type SyncJobEvent } from '../jobs/fold';
import type { JobCounts, JobDoc, Jobs } from '../jobs/repository';
import { ChunkProcessor, planCounts, type LoadContext, type PlannedChunk } from './chunks';
import type { ChunkMessage } from './dispatch';
import { SPECS } from './entities';
import { CHUNK_ROWS, keepFirstPlan, readChunk, type ChunkDoc, type Staging } from './staging';

/** Internal calls of a chunk get this long. */
const CHUNK_CALL_DEADLINE_MS = 60_000;
/** Deleting what a replace did not load may cover a large scope (the service deletes in batches). */
const DELETE_DEADLINE_MS = 600_000;
/** Asking what a failed chunk committed must not hold up its dead-lettering for long. */
const REPORT_DEADLINE_MS = 5_000;

export function loadIdOf(jobId: number): string {
  return `job:${jobId}`;
}

export function loadContextOf(job: JobDoc): LoadContext {
  const sync = job.sync!;
  return {
    tenant: job.tenant,
    load_id: loadIdOf(job._id),
    spec: SPECS[sync.entity],
    scope: sync.scope,
    options: sync.options,
    rows_path: sync.rows_path,
    columns: sync.columns,
    // The request that started the job, when the bus carried it here; the job id otherwise.
    call: {
      context: { requestId: currentContext()?.requestId ?? `job-${job._id}`, tenant: job.tenant },
      deadlineMs: CHUNK_CALL_DEADLINE_MS,
    },
  };
}

export class ChunkWorker {
  constructor(
    private readonly jobs: Jobs,
    private readonly staging: Staging,
    private readonly processor: ChunkProcessor,
    private readonly clients: Clients,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {
    for (const spec of Object.values(SPECS)) metrics?.expectParts(spec.jobKind);
  }

  readonly handle = async (message: ChunkMessage, delivery: Delivery): Promise<void> => {
    const job = await this.jobs.findById(message.job_id);
    if (!job?.sync || job.tenant !== message.tenant) {
      this.logger.warn({ job: message.job_id, step: message.step }, 'chunk message for no sync job; dropped');
      return;
    }
    if (job.sync.phase === 'done') return;
    try {
      await this.run(job, message);
    } catch (err) {
      this.metrics?.partFailed(job.kind, delivery, err);
      throw err;
    }
  };

  /** The bus is about to dead-letter a chunk message: its job hears why. */
  readonly deadLettered = async (body: unknown, _delivery: Delivery, err: unknown): Promise<void> => {
    const message = body as Partial<ChunkMessage> | null;
    if (typeof message?.job_id !== 'number' || typeof message.seq !== 'number') return;
    const job = await this.jobs.findById(message.job_id);
    if (!job?.sync || job.tenant !== message.tenant || job.sync.phase === 'done') return;
    await this.reportFailure(job, message as ChunkMessage, err);
  };

  private async chunk(job: JobDoc, seq: number): Promise<ChunkDoc> {
    const chunk = await readChunk(this.staging, job.sync!.upload, seq);
    if (!chunk) throw new Error(`staged chunk ${seq} of job ${job._id} is missing`);
    return chunk;
  }

  private send(event: SyncJobEvent): Promise<void> {
    return this.bus.send(JOB_EVENTS_QUEUE, event);
  }

  private async run(job: JobDoc, message: ChunkMessage): Promise<void> {
    const ctx = loadContextOf(job);
    const base = { job_id: job._id, tenant: job.tenant };
    if (message.step === 'delete') {
      const deleted = await this.deleteOutsideLoad(job, ctx);
      await this.send({ ...base, type: 'scope_deleted', deleted });
      return;
    }
    const chunk = await this.chunk(job, message.seq);
    const id = chunk._id;
    let planned: PlannedChunk | undefined;
    let plan = await this.staging.plans.findById(id);
    if (!plan) {
      if (message.step === 'apply') throw new Error(`chunk ${message.seq} of job ${job._id} has no plan to apply`);
      planned = await this.processor.plan(ctx, chunk);
      plan = await keepFirstPlan(this.staging, { _id: id, upload: chunk.upload, ...planned.plan });
      // Another delivery stored its plan first: apply by that one, with names resolved afresh.
      if (plan.outcomes.join() !== planned.plan.outcomes.join()) planned = undefined;
    }
    const rows = chunk.rows.length;
    if (message.step === 'validate') {
      const invalid = plan.outcomes.filter((o) => o === 'invalid').length;
      await this.send({
        ...base,
        type: 'chunk_validated',
        seq: message.seq,
        rows,
        invalid_rows: invalid,
        errors: plan.errors,
        errors_count: plan.errors_count,
      });
      return;
    }
    const done = await this.processor.apply(ctx, chunk, plan, planned?.resolved);
    // What the store did (a redelivery: what the first attempt did), so the job counts what is stored.
    const invalid = planCounts(plan).failed;
    const counts = { created: done.created, updated: done.updated, unchanged: done.unchanged, failed: invalid + done.rejected };
    // All-or-nothing loads reported their errors when validating; a load in one pass reports them now.
    const reportErrors = message.step === 'load';
    await this.send({
      ...base,
      type: 'chunk_applied',
      seq: message.seq,
      rows,
      result: { ...counts, deleted: 0 },
      errors: reportErrors ? plan.errors : [],
      errors_count: reportErrors ? plan.errors_count : 0,
    });
  }

  /** Replace: counts what is to go before deleting it, once, so a repeated step reports the first count. */
  /** Rows of the chunk earlier attempts wrote, or null when that cannot be known now. */
  private async committedBefore(job: JobDoc, seq: number): Promise<JobCounts | null> {
    try {
      const chunk = await this.chunk(job, seq);
      const plan = await this.staging.plans.findById(chunk._id);
      if (!plan) return null;
      const ctx = loadContextOf(job);
      const found = await this.processor.committed({ ...ctx, call: { ...ctx.call, deadlineMs: REPORT_DEADLINE_MS } }, chunk, plan);
      return { created: found.created, updated: found.updated, unchanged: found.unchanged, deleted: 0, failed: 0 };
    } catch (err) {
      this.logger.warn({ err, job: job._id, seq }, 'could not learn what a failed chunk committed; counting it failed');
      return null;
    }
  }

  private async deleteOutsideLoad(job: JobDoc, ctx: LoadContext): Promise<number> {
    const sync = job.sync!;
    const scope = sync.scope_ids ?? {};
    const call = { ...ctx.call, deadlineMs: DELETE_DEADLINE_MS };
    const remove = (dry_run: boolean) => ctx.spec.deleteOutsideLoad(this.clients, ctx.load_id, scope, dry_run, call);
    const upload = await this.staging.uploads.findById(sync.upload);
    if (!upload) throw new Error(`upload of job ${job._id} is missing`);
    if (upload.planned_deletes === null) {
      const { deleted } = await remove(true);
      await this.staging.uploads.updateOne({ _id: upload._id, planned_deletes: null }, { $set: { planned_deletes: deleted } });
    }
    const planned = (await this.staging.uploads.findById(sync.upload))!.planned_deletes ?? 0;
    await remove(false);
    return planned;
  }

  /**
   * Tells the job a step will not happen (its message is going to the dead-letter queue).
   * A load step may have been committed in part by an earlier attempt: when transactional
   * can tell, those rows are counted as applied and only the rest as failed.
   */
  async reportFailure(job: JobDoc, message: ChunkMessage, err: unknown): Promise<void> {
    // From the load's size, not the chunk: a poison chunk may be unreadable.
    const first = message.seq * CHUNK_ROWS;
    const rows = message.step === 'delete' ? 0 : Math.max(0, Math.min(CHUNK_ROWS, job.progress.total - first));
    const reason = failureReason(err);
    this.logger.error({ err, job: job._id, seq: message.seq, step: message.step }, 'chunk failed on its last delivery');
    const committed = message.step === 'load' || message.step === 'apply' ? await this.committedBefore(job, message.seq) : null;
    const event: SyncJobEvent = {
      job_id: job._id,
      tenant: job.tenant,
      type: 'chunk_failed',
      seq: message.seq,
      step: message.step,
      rows,
      ...(message.step === 'delete' ? {} : { first_row: first }),
      ...(committed ? { committed } : {}),
      message:
        message.step === 'delete'
          ? `Deleting the records outside the load did not happen: ${reason}. It went to the dead-letter queue.`
          : `Chunk ${message.seq} (rows ${first}-${first + Math.max(0, rows - 1)}) was not ${message.step === 'validate' ? 'validated' : 'loaded'}: ${reason}. It went to the dead-letter queue.`,
    };
    await this.send(event).catch((sendErr: unknown) =>
      this.logger.error({ err: sendErr, job: job._id }, 'reporting a failed chunk failed'),
    );
  }
}
