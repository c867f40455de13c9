/**
 * The plan-run chunk worker. A chunk is planned once: its outcome is recorded before it is
 * reported, so a redelivery reports the recorded outcome again (workflows counts each part
 * once) instead of planning twice. The worker that records the run's last chunk finishes the job.
 */
import {
  ConflictError,
  currentContext,
  publicReason,
  runWithContext,
  type Bus,
  type Clients,
  type Collection,
  type Delivery,
  type Logger,
  type Metrics,
  type RequestContext,
} from '@supply/kit';
import { JOB_EVENTS_QUEUE, type ExternalJobEvent } from '@supply/contracts';
import type { ModelRunDoc } from '../runs/repository';
import { BucketClock } from './calendar';
import { planBatch } from './planner';
import type { UncertaintyReader } from './safety-stock';
import type { PlanChunkDoc, PlanJobDoc, PlanRepositories } from './repository';
import { JOB_KIND, now, type ChunkMessage } from './service';

/**
 * Deliveries after which a chunk failing on infrastructure reports its item-locations failed
 * instead of retrying, so the job still finishes (the bus dead-letters after 5).
 */
export const LAST_DELIVERY = 4;
const MAX_EVENT_ERRORS = 1000;

export interface WorkerDeps {
  clients: Clients;
  runs: Collection<ModelRunDoc>;
  repos: PlanRepositories;
  bus: Bus;
  logger: Logger;
  metrics?: Metrics;
  /** The tenant's latest forecast uncertainty, for service-level safety stock (absent: fixed only). */
  uncertainty?: (tenant: string) => UncertaintyReader;
}

const contextOf = (run: PlanJobDoc, seq: number): RequestContext => ({
  requestId: currentContext()?.requestId ?? `supply-plan-run-${run._id}-${seq}`,
  tenant: run.tenant,
  principal: run.principal,
});

export class PlanChunkWorker {
  constructor(private readonly deps: WorkerDeps) {
    deps.metrics?.expectParts(JOB_KIND);
  }

  readonly handle = async (message: ChunkMessage, delivery: Delivery): Promise<void> => {
    const run = await this.deps.repos.jobs.findById(message.run_id);
    if (!run || run.tenant !== message.tenant || !run.chunks[message.seq]) {
      this.deps.logger.warn({ run: message.run_id, seq: message.seq }, 'chunk of an unknown plan run; dropped');
      return;
    }
    await runWithContext(contextOf(run, message.seq), async () => {
      const chunk =
        (await this.deps.repos.chunks.findById(`${run._id}:${message.seq}`)) ??
        (await this.record(await this.plan(run, message.seq, delivery)));
      await this.report(run, chunk);
      if ((await this.deps.repos.chunks.count({ run_id: run._id })) >= run.chunks.length) await this.finish(run);
    }).catch((err: unknown) => {
      this.deps.metrics?.partFailed(JOB_KIND, delivery, err);
      throw err;
    });
  };

  /** Plans one chunk; item-location problems become its errors, infrastructure failures throw until the last delivery. */
  private async plan(run: PlanJobDoc, seq: number, delivery: Delivery): Promise<PlanChunkDoc> {
    const ids = run.chunks[seq]!;
    const offset = run.chunks.slice(0, seq).reduce((n, c) => n + c.length, 0);
    const chunk: PlanChunkDoc = { _id: `${run._id}:${seq}`, run_id: run._id, seq, planned: 0, failed: 0, errors: [], errors_count: 0 };
    const fail = (id: number, field: string, message: string) => {
      chunk.failed++;
      chunk.errors_count++;
      if (chunk.errors.length < MAX_EVENT_ERRORS) chunk.errors.push({ row: offset + ids.indexOf(id), field, message });
    };
    await this.deps.runs.updateOne({ _id: run._id, status: 'queued' }, { $set: { status: 'running' } });
    // The job reads `running` from the first chunk picked up, not from the first one finished.
    const started: ExternalJobEvent = { job_id: run.job_id, tenant: run.tenant, type: 'started' };
    await this.deps.bus.send(JOB_EVENTS_QUEUE, started, { messageId: `${run._id}:started:${seq}` });
    try {
      const found = await this.deps.clients.reference.getPlanningParameters({ ids, names: [], view_id: 0, view_name: '' });
      const byId = new Map(found.records.map((r) => [r.item_location!.id, r]));
      const present = ids.flatMap((id) => byId.get(id) ?? []);
      const outcomes = await planBatch(
        this.deps.clients,
        {
          plan_run_id: run._id,
          mode: run.mode,
          supply_policy: run.supply_policy,
          view: { id: run.view_id, name: run.view_name },
          clock: new BucketClock(run.bucket, run.period_starts),
        },
        present,
        this.deps.uncertainty?.(run.tenant),
      );
      for (const id of ids) if (!byId.has(id)) fail(id, 'item_location_id', `Item-location ${id} no longer exists.`);
      for (const outcome of outcomes) {
        if (outcome.ok) chunk.planned++;
        else
          fail(
            outcome.itemLocation.id,
            outcome.field,
            `${outcome.itemLocation.item_name} at ${outcome.itemLocation.location_name}: ${outcome.message}`,
          );
      }
      this.counted(chunk);
      return chunk;
    } catch (err) {
      // Thrown back while the bus would still retry (a dependency down is retried through the outage window).
      if (delivery.deliveryCount < LAST_DELIVERY && !delivery.willDeadLetter?.(err)) throw err;
      this.deps.logger.error({ err, run: run._id, seq }, 'plan chunk failed on its last delivery; its item-locations are reported failed');
      const reason = publicReason(err);
      Object.assign(chunk, { planned: 0, failed: 0, errors: [], errors_count: 0 });
      for (const id of ids) fail(id, 'item_location_id', `Could not be planned: ${reason}`);
      this.counted(chunk);
      return chunk;
    }
  }

  private counted(chunk: PlanChunkDoc): void {
    if (chunk.planned > 0) this.deps.metrics?.plansComputed.inc({ outcome: 'planned' }, chunk.planned);
    if (chunk.failed > 0) this.deps.metrics?.plansComputed.inc({ outcome: 'failed' }, chunk.failed);
  }

  /** Records a chunk's outcome once; a concurrent redelivery that recorded first wins. */
  private async record(chunk: PlanChunkDoc): Promise<PlanChunkDoc> {
    try {
      return await this.deps.repos.chunks.insertOne(chunk);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      return (await this.deps.repos.chunks.findById(chunk._id)) ?? chunk;
    }
  }

  private async report(run: PlanJobDoc, chunk: PlanChunkDoc): Promise<void> {
    const event: ExternalJobEvent = {
      job_id: run.job_id,
      tenant: run.tenant,
      type: 'part',
      part: `chunk-${chunk.seq}`,
      processed: chunk.planned + chunk.failed,
      result: { created: chunk.planned, failed: chunk.failed },
      errors: chunk.errors,
      errors_count: chunk.errors_count,
    };
    await this.deps.bus.send(JOB_EVENTS_QUEUE, event, { messageId: `${run._id}:part:${chunk.seq}` });
  }

  /**
   * Ends the job, then closes the run. `finished` names the part count, so workflows ends the
   * job only once every chunk's part is counted, in whatever order they arrive: nothing polls.
   * Safe to repeat: workflows ignores events for a finished job.
   */
  private async finish(run: PlanJobDoc): Promise<void> {
    const chunks = await this.deps.repos.chunks.find({ run_id: run._id });
    const planned = chunks.reduce((n, c) => n + c.planned, 0);
    const failed = chunks.reduce((n, c) => n + c.failed, 0);
    const status = failed === 0 ? 'succeeded' : planned === 0 ? 'failed' : 'partially_succeeded';
    const message =
      `Planned ${planned} of ${run.total} item-locations of view ${run.view_name} (${run.mode} mode, ${run.supply_policy} supply, plan run ${run._id})` +
      (failed > 0 ? `; ${failed} could not be planned, see errors.` : '.');
    const event: ExternalJobEvent = { job_id: run.job_id, tenant: run.tenant, type: 'finished', status, message, parts: chunks.length };
    await this.deps.bus.send(JOB_EVENTS_QUEUE, event, { messageId: `${run._id}:finished` });
    await this.deps.runs.updateOne({ _id: run._id, finished_at: null }, { $set: { status, finished_at: now() } });
    await this.deps.repos.jobs.updateOne({ _id: run._id }, { $set: { open: false } });
  }
}
