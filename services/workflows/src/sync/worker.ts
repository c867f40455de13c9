/**
 * The sync worker: takes chunk messages off the bus, does the step, and reports it as a
 * job event, on the kit's job engine (PartLedger): each step's outcome is recorded once, so
 * a redelivery reports what the first attempt did (the rows the store holds), never a second
 * count; the fold counts each chunk once. A chunk the bus gives up on (a permanent failure on
 * its last allowed delivery, or a dependency down for the whole outage window) is recorded
 * failed, with its rows and a reason fit for the client, before it is dead-lettered. An
 * operator's replay of a dead-lettered load step loads the chunk again; its report replaces
 * the failure in the job's counts.
 */
import {
  currentContext,
  PartLedger,
  partReportId,
  replayFields,
  replayOf,
  type Bus,
  type Clients,
  type Delivery,
  type Logger,
  type MessageEnvelope,
  type Metrics,
  type PartRecord,
  type PartTask,
} from '@supply/kit';
import { JOB_EVENTS_QUEUE, type SyncJobEvent, type SyncStepOutcome } from '../jobs/fold';
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

/** The part a step is recorded under: a chunk's validation, its load (one pass or the apply after validating), or the deletion. */
export function partOf(message: Pick<ChunkMessage, 'step' | 'seq'>): string {
  if (message.step === 'delete') return 'delete';
  return `${message.step === 'validate' ? 'validate' : 'load'}-${message.seq}`;
}

export class ChunkWorker {
  private readonly ledger: PartLedger<SyncStepOutcome>;

  constructor(
    private readonly jobs: Jobs,
    private readonly staging: Staging,
    private readonly processor: ChunkProcessor,
    private readonly clients: Clients,
    private readonly bus: Bus,
    private readonly logger: Logger,
    metrics?: Metrics,
  ) {
    for (const spec of Object.values(SPECS)) metrics?.expectParts(spec.jobKind);
    this.ledger = new PartLedger(staging.parts, { logger, metrics });
  }

  readonly handle = async (message: ChunkMessage, delivery: Delivery, envelope?: MessageEnvelope): Promise<void> => {
    const job = await this.jobs.findById(message.job_id);
    if (!job?.sync || job.tenant !== message.tenant) {
      this.logger.warn({ job: message.job_id, step: message.step }, 'chunk message for no sync job; dropped');
      return;
    }
    if (job.sync.phase === 'done') {
      // A finished job takes only an operator's replay of a load that failed.
      const replayable = replayOf(envelope) > 0 && (message.step === 'load' || message.step === 'apply');
      if (!replayable) {
        if (replayOf(envelope) > 0)
          this.logger.warn({ job: job._id, step: message.step }, 'replayed step of a finished sync; nothing to do');
        return;
      }
    }
    await this.ledger.settle(this.task(job, message), delivery, envelope);
  };

  /** The bus is about to dead-letter a chunk message: its job hears why. */
  readonly deadLettered = async (body: unknown, _delivery: Delivery, err: unknown): Promise<void> => {
    const message = body as Partial<ChunkMessage> | null;
    if (typeof message?.job_id !== 'number' || typeof message.seq !== 'number') return;
    const job = await this.jobs.findById(message.job_id);
    if (!job?.sync || job.tenant !== message.tenant || job.sync.phase === 'done') return;
    await this.reportFailure(job, message as ChunkMessage, err);
  };

  /**
   * Tells the job a step will not happen (its message is in, or going to, the dead-letter
   * queue): the ledger's record of it if there is one, else the failure recorded now.
   */
  async reportFailure(job: JobDoc, message: ChunkMessage, err: unknown): Promise<void> {
    await this.ledger.giveUpOn(this.task(job, message), err);
  }

  private task(job: JobDoc, message: ChunkMessage): PartTask<SyncStepOutcome> {
    return {
      job: job._id,
      part: partOf(message),
      kind: job.kind,
      run: () => this.run(job, message),
      failed: (err, reason) => this.failure(job, message, err, reason),
      report: (record) => this.report(job, record),
    };
  }

  private async report(job: JobDoc, record: PartRecord<SyncStepOutcome>): Promise<void> {
    const event = {
      job_id: job._id,
      tenant: job.tenant,
      ...record.outcome,
      ...replayFields(record, (o) => o),
    } as SyncJobEvent;
    await this.bus.send(JOB_EVENTS_QUEUE, event, { messageId: partReportId(record) });
  }

  private async chunk(job: JobDoc, seq: number): Promise<ChunkDoc> {
    const chunk = await readChunk(this.staging, job.sync!.upload, seq);
    if (!chunk) throw new Error(`staged chunk ${seq} of job ${job._id} is missing`);
    return chunk;
  }

  private async run(job: JobDoc, message: ChunkMessage): Promise<SyncStepOutcome> {
    const ctx = loadContextOf(job);
    if (message.step === 'delete') return { type: 'scope_deleted', deleted: await this.deleteOutsideLoad(job, ctx) };
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
      return {
        type: 'chunk_validated',
        seq: message.seq,
        rows,
        invalid_rows: invalid,
        errors: plan.errors,
        errors_count: plan.errors_count,
      };
    }
    const done = await this.processor.apply(ctx, chunk, plan, planned?.resolved);
    // What the store did (after a crash mid-step: what the first attempt did), so the job counts what is stored.
    const invalid = planCounts(plan).failed;
    const counts = { created: done.created, updated: done.updated, unchanged: done.unchanged, failed: invalid + done.rejected };
    // All-or-nothing loads reported their errors when validating; a load in one pass reports them now.
    const reportErrors = message.step === 'load';
    return {
      type: 'chunk_applied',
      seq: message.seq,
      rows,
      result: { ...counts, deleted: 0 },
      errors: reportErrors ? plan.errors : [],
      errors_count: reportErrors ? plan.errors_count : 0,
    };
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
   * What a step that will not happen means for its job. A load step may have been committed in
   * part by an earlier attempt: when transactional can tell, those rows are counted as applied
   * and only the rest as failed.
   */
  private async failure(job: JobDoc, message: ChunkMessage, err: unknown, reason: string): Promise<SyncStepOutcome> {
    // From the load's size, not the chunk: a poison chunk may be unreadable.
    const first = message.seq * CHUNK_ROWS;
    const rows = message.step === 'delete' ? 0 : Math.max(0, Math.min(CHUNK_ROWS, job.progress.total - first));
    this.logger.error({ err, job: job._id, seq: message.seq, step: message.step }, 'chunk failed on its last delivery');
    const committed = message.step === 'load' || message.step === 'apply' ? await this.committedBefore(job, message.seq) : null;
    return {
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
  }
}
