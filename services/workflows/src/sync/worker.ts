/**
 * The sync worker: takes chunk messages off the bus, does the step, and reports it as a
 * job event. Delivery is at least once; every step is idempotent: the plan of a chunk is
 * kept from its first attempt, applying rows already applied changes nothing, and the
 * fold counts each chunk once. A chunk that fails on its last allowed delivery is
 * reported failed before the bus dead-letters it.
 */
import type { Bus, Clients, Delivery, Logger } from '@supply/kit';
import { DEFAULT_MAX_DELIVERIES } from '@supply/kit/bus/common';
import { JOB_EVENTS_QUEUE, type SyncJobEvent } from '../jobs/fold';
import type { JobDoc, Jobs } from '../jobs/repository';
import { ChunkProcessor, planCounts, type LoadContext, type PlannedChunk } from './chunks';
import type { ChunkMessage } from './dispatch';
import { SPECS } from './rows';
import { CHUNK_ROWS, chunkId, keepFirstPlan, type ChunkDoc, type Staging } from './staging';

/** Internal calls of a chunk get this long. */
const CHUNK_CALL_DEADLINE_MS = 60_000;
/** Deleting what a replace did not load may cover a large scope (the service deletes in batches). */
const DELETE_DEADLINE_MS = 600_000;

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
    call: { context: { requestId: `job-${job._id}`, tenant: job.tenant }, deadlineMs: CHUNK_CALL_DEADLINE_MS },
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
    private readonly maxDeliveries = DEFAULT_MAX_DELIVERIES,
  ) {}

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
      if (delivery.deliveryCount >= this.maxDeliveries) await this.reportFailure(job, message, err);
      throw err;
    }
  };

  private async chunk(job: JobDoc, seq: number): Promise<ChunkDoc> {
    const chunk = await this.staging.chunks.findById(chunkId(job.sync!.upload, seq));
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
      await this.send({ ...base, type: 'chunk_validated', seq: message.seq, rows, invalid_rows: invalid, errors: plan.errors, errors_count: plan.errors_count });
      return;
    }
    await this.processor.apply(ctx, chunk, plan, planned?.resolved);
    const counts = planCounts(plan);
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
  private async deleteOutsideLoad(job: JobDoc, ctx: LoadContext): Promise<number> {
    const sync = job.sync!;
    const scope = sync.scope_ids ?? {};
    const call = { ...ctx.call, deadlineMs: DELETE_DEADLINE_MS };
    const remove = (dry_run: boolean) =>
      sync.entity === 'sales'
        ? this.clients.transactional.deleteSalesOutsideLoad(
            { load_id: ctx.load_id, sale_type_ids: scope.sale_type ?? [], customer_group_ids: scope.customer_group ?? [], dry_run },
            call,
          )
        : this.clients.transactional.deleteInventoryOutsideLoad(
            { load_id: ctx.load_id, location_ids: scope.location ?? [], item_ids: scope.item ?? [], dry_run },
            call,
          );
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

  /** Tells the job a step will not happen (its message is going to the dead-letter queue). */
  async reportFailure(job: JobDoc, message: ChunkMessage, err: unknown): Promise<void> {
    // From the load's size, not the chunk: a poison chunk may be unreadable.
    const first = message.seq * CHUNK_ROWS;
    const rows = message.step === 'delete' ? 0 : Math.max(0, Math.min(CHUNK_ROWS, job.progress.total - first));
    const reason = err instanceof Error ? err.message : String(err);
    const event: SyncJobEvent = {
      job_id: job._id,
      tenant: job.tenant,
      type: 'chunk_failed',
      seq: message.seq,
      step: message.step,
      rows,
      message:
        message.step === 'delete'
          ? `Deleting the records outside the load failed ${this.maxDeliveries} times and went to the dead-letter queue: ${reason}.`
          : `Chunk ${message.seq} (rows ${first}-${first + Math.max(0, rows - 1)}) failed ${this.maxDeliveries} times and went to the dead-letter queue: ${reason}.`,
    };
    await this.send(event).catch((sendErr: unknown) => this.logger.error({ err: sendErr, job: job._id }, 'reporting a failed chunk failed'));
  }
}
