/**
 * GenerateSupplyPlan: one item-location is planned while the caller waits; a view becomes a
 * job (registered with workflows) whose item-locations go out in chunks on the bus to the
 * compute workers (worker.ts).
 */
import {
  AppError,
  isAppError,
  jobRootHeaders,
  traceRoot,
  ValidationError,
  type Bus,
  type CallContext,
  type Clients,
  type Collection,
  type Logger,
  type Metrics,
} from '@supply/kit';
import { queue, supply_compute_v1 as pb, type supply_reference_v1 as ref } from '@supply/contracts';
import type { ModelRunDoc } from '../runs/repository';
import { BucketClock } from './calendar';
import { fingerprintOf, type IdempotencyKeys } from '../forecasting/idempotency';
import { planBatch } from './planner';
import type { UncertaintyReader } from './safety-stock';
import type { PlanJobDoc, PlanRepositories } from './repository';
import { parseGenerationRequest, type GenerationRequest, type Target } from './request';

/** Compute's bounds (docs/supply-planning.md): beyond them a request answers 503 with Retry-After. */
export const LIMITS = {
  /** Item-locations one compute process plans synchronously at once. */
  syncPlansInFlight: 8,
  syncRetryAfterSeconds: 1,
  /** View plan runs queued or running, across tenants; a run open longer than the window no longer counts. */
  openRuns: 16,
  openRunWindowMs: 60 * 60_000,
  runRetryAfterSeconds: 10,
  /** Item-locations per chunk message. */
  chunkSize: 50,
};

/** The durable work queue of plan-run chunks (the bus namespace prefixes it). */
export const CHUNKS_QUEUE = queue<ChunkMessage>('compute.supply-plan-chunks');
export const JOB_KIND = 'supply_plan_run';

export interface ChunkMessage {
  tenant: string;
  run_id: number;
  seq: number;
}

export interface ServiceDeps {
  clients: Clients;
  runs: Collection<ModelRunDoc>;
  repos: PlanRepositories;
  /** Idempotency keys of plan requests, kept by the workflows service. */
  keys: IdempotencyKeys<pb.GenerateSupplyPlanResponse>;
  bus: Bus;
  logger: Logger;
  metrics?: Metrics;
  limits?: typeof LIMITS;
  /** The tenant's latest forecast uncertainty, for service-level safety stock (absent: fixed only). */
  uncertainty?: (tenant: string) => UncertaintyReader;
}

export const now = () => new Date().toISOString();
const label = (field: string) => field.replace(/_/g, ' ');

/** 503 with Retry-After: compute cannot take this work now. */
export function noCapacity(detail: string, retryAfterSeconds: number): AppError {
  return new AppError('unavailable', detail, { problem: 'service-unavailable', headers: { 'Retry-After': String(retryAfterSeconds) } });
}

export class SupplyPlanService {
  private syncInFlight = 0;
  private readonly limits: typeof LIMITS;

  constructor(private readonly deps: ServiceDeps) {
    this.limits = deps.limits ?? LIMITS;
  }

  async generate(request: pb.GenerateSupplyPlanRequest, ctx: CallContext): Promise<pb.GenerateSupplyPlanResponse> {
    const parsed = parseGenerationRequest(request);
    if (!parsed.ok) throw new ValidationError(parsed.errors);
    const tenant = ctx.requireTenant();
    const { idempotency_key: key, ...fields } = request;
    const claim = key ? await this.deps.keys.claim(key, fingerprintOf(fields)) : null;
    if (claim?.kind === 'replay') return { ...claim.answer, replayed: true };
    let answer: pb.GenerateSupplyPlanResponse;
    try {
      answer =
        parsed.value.target.kind === 'view' ? await this.startRun(tenant, parsed.value, ctx) : await this.planNow(tenant, parsed.value);
    } catch (err) {
      if (claim) await this.deps.keys.release(claim);
      throw err;
    }
    if (claim) await this.deps.keys.complete(claim, answer);
    return answer;
  }

  /** One item-location, planned and stored before answering. */
  private async planNow(tenant: string, request: GenerationRequest): Promise<pb.GenerateSupplyPlanResponse> {
    if (this.syncInFlight >= this.limits.syncPlansInFlight) {
      throw noCapacity(
        `Compute is already planning ${this.syncInFlight} item-locations synchronously, its limit; retry shortly or plan a view as a job.`,
        this.limits.syncRetryAfterSeconds,
      );
    }
    this.syncInFlight++;
    try {
      const target = request.target as Exclude<Target, { kind: 'view' }>;
      const field = target.kind === 'item_location' ? 'item_location_id' : 'item_name';
      const record = await this.resolveItemLocation(target);
      const itemLocation = record.item_location!;
      const view = await this.viewOf(itemLocation, field);
      const run = await this.deps.runs.insertOne({
        tenant,
        kind: 'supply_plan',
        job_id: 0,
        status: 'running',
        created_at: now(),
        finished_at: null,
      });
      let status = 'failed';
      try {
        const [outcome] = await planBatch(
          this.deps.clients,
          {
            plan_run_id: run._id,
            mode: request.mode,
            supply_policy: request.supply_policy,
            view: { id: view.view!.id, name: view.view!.name },
            clock: new BucketClock(view.calendar!.bucket, view.bucket_starts),
          },
          [record],
          this.deps.uncertainty?.(tenant),
        );
        if (!outcome!.ok) throw new ValidationError({ [outcome!.field]: [outcome!.message] });
        status = 'succeeded';
        return { outcome: { $case: 'plan', plan: outcome!.plan }, replayed: false };
      } finally {
        this.deps.metrics?.plansComputed.inc({ outcome: status === 'succeeded' ? 'planned' : 'failed' });
        await this.deps.runs.updateOne({ _id: run._id }, { $set: { status, finished_at: now() } });
      }
    } finally {
      this.syncInFlight--;
    }
  }

  /** The item-location a request names, with its parameters; unknown ones are 422 on the field that names them. */
  private async resolveItemLocation(target: Exclude<Target, { kind: 'view' }>): Promise<ref.PlanningParameters> {
    const reference = this.deps.clients.reference;
    if (target.kind === 'item_location') {
      const found = await reference.getPlanningParameters({ ids: [target.item_location_id], names: [], view_id: 0, view_name: '' });
      if (found.records.length === 0) throw new ValidationError({ item_location_id: ['The selected item location id is invalid.'] });
      return found.records[0]!;
    }
    const { item_name, location_name } = target;
    const found = await reference.getPlanningParameters({ ids: [], names: [{ item_name, location_name }], view_id: 0, view_name: '' });
    if (found.records.length > 0) return found.records[0]!;
    const names = await reference.resolveNames({
      items: [item_name],
      locations: [location_name],
      customer_groups: [],
      sale_types: [],
      timing_intervals: [],
      uoms: [],
    });
    const errors: Record<string, string[]> = {};
    if (!names.items?.ids[0]) errors.item_name = ['The selected item name is invalid.'];
    if (!names.locations?.ids[0]) errors.location_name = ['The selected location name is invalid.'];
    if (Object.keys(errors).length === 0)
      errors.location_name = [`${item_name} is not stocked at ${location_name}: there is no such item-location.`];
    throw new ValidationError(errors);
  }

  /** The first view (by id) holding the item-location: its calendar gives the plan's buckets. */
  private async viewOf(itemLocation: ref.ItemLocation, field: string): Promise<ref.GetViewResponse> {
    const reference = this.deps.clients.reference;
    for (let page = 1; ; page++) {
      const views = await reference.listViews({
        page: { page, per_page: 100, total: 0 },
        filter_name: '',
        filter_item_name: '',
        filter_location_name: '',
      });
      const holding = views.records.find((view) => view.item_location_ids.includes(itemLocation.id));
      if (holding) return reference.getView({ id: holding.id, name: '' });
      if (views.records.length < 100) break;
    }
    const where = `${itemLocation.item_name} at ${itemLocation.location_name}`;
    throw new ValidationError({ [field]: [`${where} is in no view; add it to a view, whose calendar gives the plan's buckets.`] });
  }

  /** A view: a job over its item-locations, dispatched in chunks; answers the job as created (queued). */
  private async startRun(tenant: string, request: GenerationRequest, ctx: CallContext): Promise<pb.GenerateSupplyPlanResponse> {
    const { repos, runs, clients } = this.deps;
    const open = await repos.jobs.count({ open: true, created_ms: { $gt: Date.now() - this.limits.openRunWindowMs } });
    if (open >= this.limits.openRuns) {
      throw noCapacity(`Compute is running ${open} view plan runs, its limit; retry later.`, this.limits.runRetryAfterSeconds);
    }
    if (!ctx.principal) throw new AppError('unauthenticated', 'Planning a view needs the x-principal its job is created for.');
    const target = request.target as Extract<Target, { kind: 'view' }>;
    const field = target.view_id ? 'view_id' : 'view_name';
    let view: ref.GetViewResponse;
    try {
      view = await clients.reference.getView({ id: target.view_id, name: target.view_name });
    } catch (err) {
      if (isAppError(err) && err.code === 'not_found') throw new ValidationError({ [field]: [`The selected ${label(field)} is invalid.`] });
      throw err;
    }
    const { id: viewId, name: viewName, item_location_ids: order } = view.view!;
    const parameters = await clients.reference.getPlanningParameters({ ids: [], names: [], view_id: viewId, view_name: '' });
    // Every mode plans every item-location of the view that still exists.
    const existing = new Set(parameters.records.map((r) => r.item_location!.id));
    const ids = order.filter((id) => existing.has(id));
    if (ids.length === 0) throw new ValidationError({ [field]: [`The view ${viewName} has no item-locations to plan.`] });
    const job = await clients.workflows.createJob({ kind: JOB_KIND, total: ids.length });
    const run = await runs.insertOne({
      tenant,
      kind: 'supply_plan',
      job_id: job.id,
      status: 'queued',
      created_at: now(),
      finished_at: null,
    });
    const chunks: number[][] = [];
    for (let i = 0; i < ids.length; i += this.limits.chunkSize) chunks.push(ids.slice(i, i + this.limits.chunkSize));
    const root = traceRoot();
    const doc = await repos.jobs.insertOne({
      _id: run._id,
      tenant,
      job_id: job.id,
      principal: ctx.principal,
      mode: request.mode,
      supply_policy: request.supply_policy,
      view_id: viewId,
      view_name: viewName,
      bucket: view.calendar!.bucket,
      period_starts: view.bucket_starts,
      chunks,
      total: ids.length,
      dispatched: false,
      open: true,
      created_ms: Date.now(),
      ...(root && { trace_root: root }),
    });
    await this.dispatch(doc);
    return { outcome: { $case: 'job', job }, replayed: false };
  }

  /** Puts every chunk of a run on the bus, then marks it dispatched; repeating it only repeats messages the workers skip. */
  async dispatch(run: PlanJobDoc): Promise<void> {
    const headers = jobRootHeaders(run.trace_root);
    await Promise.all(
      run.chunks.map((_, seq) =>
        this.deps.bus.send(
          CHUNKS_QUEUE,
          { tenant: run.tenant, run_id: run._id, seq },
          { messageId: `${run._id}:${seq}`, ...(headers && { headers }) },
        ),
      ),
    );
    await this.deps.repos.jobs.updateOne({ _id: run._id }, { $set: { dispatched: true } });
  }

  /** Dispatches the runs a process stopped before dispatching (called at start). */
  async resumeUndispatched(): Promise<number> {
    const runs = await this.deps.repos.jobs.find({ open: true, dispatched: false });
    for (const run of runs) await this.dispatch(run);
    if (runs.length > 0) this.deps.logger.info({ runs: runs.length }, 'undispatched supply plan runs dispatched');
    return runs.length;
  }
}
