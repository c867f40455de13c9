/**
 * The plan-run chunk worker, on the kit's job engine (PartLedger): a chunk is planned once and
 * its outcome recorded before it is reported, so a redelivery reports the recorded outcome again
 * (workflows counts each part once) instead of planning twice. A chunk the bus gives up on (a
 * permanent failure, or a dependency down past the outage window) is recorded with its
 * item-locations failed, reported, and dead-lettered; an operator's replay plans it again. The
 * worker that records the run's last chunk finishes the job.
 */
import {
  currentContext,
  PartLedger,
  partEvent,
  partReportId,
  runWithContext,
  type Bus,
  type Clients,
  type Collection,
  type Delivery,
  type Logger,
  type MessageEnvelope,
  type Metrics,
  type RequestContext,
} from '@supply/kit';
import { JOB_EVENTS_QUEUE, type ExternalJobEvent } from '@supply/contracts';
import type { ModelRunDoc } from '../runs/repository';
import { BucketClock } from './calendar';
import { planBatch } from './planner';
import type { UncertaintyReader } from './safety-stock';
import type { PlanChunkDoc, PlanChunkOutcome, PlanJobDoc, PlanRepositories } from './repository';
import { JOB_KIND, now, type ChunkMessage } from './service';

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

const partName = (seq: number) => `chunk-${seq}`;

export class PlanChunkWorker {
  private readonly ledger: PartLedger<PlanChunkOutcome>;

  constructor(private readonly deps: WorkerDeps) {
    deps.metrics?.expectParts(JOB_KIND);
    this.ledger = new PartLedger(deps.repos.chunks, deps);
  }

  readonly handle = async (message: ChunkMessage, delivery: Delivery, envelope?: MessageEnvelope): Promise<void> => {
    const run = await this.deps.repos.jobs.findById(message.run_id);
    if (!run || run.tenant !== message.tenant || !run.chunks[message.seq]) {
      this.deps.logger.warn({ run: message.run_id, seq: message.seq }, 'chunk of an unknown plan run; dropped');
      return;
    }
    await runWithContext(contextOf(run, message.seq), () =>
      this.ledger.settle(
        {
          job: run._id,
          part: partName(message.seq),
          kind: JOB_KIND,
          run: () => this.plan(run, message.seq),
          failed: async (_err, reason) => this.failedChunk(run, message.seq, reason),
          report: (record) => this.report(run, record),
          recorded: async () => {
            if ((await this.ledger.settled(run._id)) >= run.chunks.length) await this.finish(run);
          },
        },
        delivery,
        envelope,
      ),
    );
  };

  private emptyOutcome(run: PlanJobDoc, seq: number) {
    const ids = run.chunks[seq]!;
    const offset = run.chunks.slice(0, seq).reduce((n, c) => n + c.length, 0);
    const chunk: PlanChunkOutcome = { seq, planned: 0, failed: 0, errors: [], errors_count: 0 };
    const fail = (id: number, field: string, message: string) => {
      chunk.failed++;
      chunk.errors_count++;
      if (chunk.errors.length < MAX_EVENT_ERRORS) chunk.errors.push({ row: offset + ids.indexOf(id), field, message });
    };
    return { ids, chunk, fail };
  }

  /** Plans one chunk; item-location problems become its errors, infrastructure failures throw (the bus retries them). */
  private async plan(run: PlanJobDoc, seq: number): Promise<PlanChunkOutcome> {
    const { ids, chunk, fail } = this.emptyOutcome(run, seq);
    await this.deps.runs.updateOne({ _id: run._id, status: 'queued' }, { $set: { status: 'running' } });
    // The job reads `running` from the first chunk picked up, not from the first one finished.
    const started: ExternalJobEvent = { job_id: run.job_id, tenant: run.tenant, type: 'started' };
    await this.deps.bus.send(JOB_EVENTS_QUEUE, started, { messageId: `${run._id}:started:${seq}` });
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
  }

  /** The bus gave up on the chunk: every item-location of it is reported failed, with the reason. */
  private failedChunk(run: PlanJobDoc, seq: number, reason: string): PlanChunkOutcome {
    const { ids, chunk, fail } = this.emptyOutcome(run, seq);
    for (const id of ids) fail(id, 'item_location_id', `Could not be planned: ${reason}`);
    this.counted(chunk);
    return chunk;
  }

  private counted(chunk: PlanChunkOutcome): void {
    if (chunk.planned > 0) this.deps.metrics?.plansComputed.inc({ outcome: 'planned' }, chunk.planned);
    if (chunk.failed > 0) this.deps.metrics?.plansComputed.inc({ outcome: 'failed' }, chunk.failed);
  }

  private async report(run: PlanJobDoc, record: PlanChunkDoc): Promise<void> {
    const event = partEvent(record, run, (o) => ({
      processed: o.planned + o.failed,
      result: { created: o.planned, failed: o.failed },
      errors: o.errors,
      errors_count: o.errors_count,
    }));
    await this.deps.bus.send(JOB_EVENTS_QUEUE, event, { messageId: partReportId(record) });
  }

  /**
   * Ends the job, then closes the run. `finished` names the part count, so workflows ends the
   * job only once every chunk's part is counted, in whatever order they arrive: nothing polls.
   * Safe to repeat: workflows ignores events for a finished job.
   */
  private async finish(run: PlanJobDoc): Promise<void> {
    const chunks = await this.ledger.list(run._id);
    const planned = chunks.reduce((n, c) => n + c.outcome.planned, 0);
    const failed = chunks.reduce((n, c) => n + c.outcome.failed, 0);
    const status = failed === 0 ? 'succeeded' : planned === 0 ? 'failed' : 'partially_succeeded';
    const message =
      `Planned ${planned} of ${run.total} item-locations of view ${run.view_name} (${run.mode} mode, ${run.supply_policy} supply, plan run ${run._id})` +
      (failed > 0 ? `; ${failed} could not be planned, see errors.` : '.');
    const event: ExternalJobEvent = { job_id: run.job_id, tenant: run.tenant, type: 'finished', status, message, parts: chunks.length };
    await this.deps.bus.send(JOB_EVENTS_QUEUE, event, { messageId: `${run._id}:finished` });
    // A replayed chunk finishes the run again: its status follows, its first finish time stays.
    await this.deps.runs.updateOne({ _id: run._id, finished_at: null }, { $set: { finished_at: now() } });
    await this.deps.runs.updateOne({ _id: run._id }, { $set: { status } });
    await this.deps.repos.jobs.updateOne({ _id: run._id }, { $set: { open: false } });
  }
}
