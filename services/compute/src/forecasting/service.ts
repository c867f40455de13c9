/**
 * POST /forecasts/generate in the compute service: checks the request, resolves the
 * series, and either describes the run (dry run, nothing written) or registers a job with
 * workflows, plans the chunks and puts them on the bus. Refuses with UNAVAILABLE and a
 * Retry-After while compute cannot take the work.
 */
import {
  AppError,
  ConflictError,
  NotFoundError,
  type Bus,
  type CallContext,
  type Clients,
  type Collection,
  type Logger,
} from '@supply/kit';
import {
  supply_compute_v1 as pb,
  supply_reference_v1 as rpb,
  supply_transactional_v1 as tpb,
  type supply_workflows_v1 as wpb,
} from '@supply/contracts';
import { addPeriods, formatIsoDate, parseIsoDate, type Frequency } from '../engines/forecast/index';
import type { ModelRunDoc } from '../runs/repository';
import { gridEnd } from './history';
import { fingerprintOf, type IdempotencyKeys } from './idempotency';
import { planChunks } from './planner';
import { chunkId, type ForecastCollections, type ForecastRunDoc, type NamedId, type SeriesRef } from './repository';
import { readForecastRequest, type ForecastRequest, type ForecastScope } from './request';
import { resolveSelection } from './selection';
import { FORECAST_JOB_KIND, FORECAST_QUEUE, STALLED_RUN_MS, type ForecastWorker } from './worker';

/** Series a dry run lists (its `series_count` counts them all). */
export const DRY_RUN_SERIES_LISTED = 100;
/** Chunks waiting for a worker, all tenants together, beyond which new runs are refused. */
export const MAX_PENDING_CHUNKS = 2_000;
export const RETRY_AFTER_SECONDS = { busy_tenant: 15, backlog: 30, bus_down: 10 } as const;
/** A run that has not moved for this long no longer holds its tenant's lock. */
const LOCK_STALE_MS = 30 * 60_000;
const FREQUENCY_OF_SPAN: Readonly<Record<string, Frequency>> = {
  day: 'day',
  week: 'week',
  month: 'month',
  quarter: 'quarter',
  year: 'year',
};

export interface ForecastServiceDeps {
  forecasts: ForecastCollections;
  modelRuns: Collection<ModelRunDoc>;
  keys: IdempotencyKeys<pb.GenerateForecastsResponse>;
  clients: Pick<Clients, 'reference' | 'transactional' | 'workflows'>;
  bus: Bus;
  worker: ForecastWorker;
  logger: Logger;
}

function unavailable(message: string, retryAfter: number): AppError {
  return new AppError('unavailable', message, { headers: { 'Retry-After': String(retryAfter) } });
}

export class ForecastService {
  constructor(private readonly deps: ForecastServiceDeps) {}

  async generate(request: pb.GenerateForecastsRequest, ctx: CallContext): Promise<pb.GenerateForecastsResponse> {
    ctx.requireTenant();
    const parsed = readForecastRequest(request);
    if (!request.idempotency_key) return this.answer(parsed, ctx);
    const claim = await this.deps.keys.claim(request.idempotency_key, fingerprintOf(parsed));
    if (claim.kind === 'replay') return { ...claim.answer, replayed: true };
    let answer: pb.GenerateForecastsResponse;
    try {
      answer = await this.answer(parsed, ctx);
    } catch (err) {
      await this.deps.keys.release(claim);
      throw err;
    }
    await this.deps.keys.complete(claim, answer);
    return answer;
  }

  private async answer(request: ForecastRequest, ctx: CallContext): Promise<pb.GenerateForecastsResponse> {
    const saleTypes = await this.saleTypes();
    const selection = await resolveSelection(this.deps.clients.reference, request);
    const latest = await this.latestHistory(request, selection.scope === 'all' ? [] : selection.series, saleTypes.history);
    const historyEnd = request.history_end ?? latest?.sell_date ?? null;
    const frequency = latest ? FREQUENCY_OF_SPAN[latest.timing_interval_span.toLowerCase()] : undefined;
    const dates = latest && frequency ? forecastWindow(latest.sell_date, frequency, historyEnd!, request.forecast_periods) : null;
    const plan: pb.ForecastPlan = {
      scope: selection.scope,
      series_count: selection.series.length,
      forecast_periods: request.forecast_periods,
      timing_interval: latest?.timing_interval_span ?? '',
      history_start: request.history_start ?? '',
      history_end: historyEnd ?? '',
      forecast_start: dates?.start ?? '',
      forecast_end: dates?.end ?? '',
      algorithm: request.algorithm,
      missing_imputation: request.missing_imputation,
      forecast_constraint: request.forecast_constraint,
    };
    if (request.dry_run) {
      return {
        plan,
        outcome: { $case: 'dry_run', dry_run: true },
        series: selection.series.slice(0, DRY_RUN_SERIES_LISTED),
        replayed: false,
      };
    }
    const job = await this.start(request, ctx, { scope: selection.scope, historyEnd }, selection.series, saleTypes);
    return { plan, outcome: { $case: 'job', job }, series: [], replayed: false };
  }

  private async saleTypes(): Promise<{ history: NamedId; forecast: NamedId }> {
    const names = ['History', 'Forecast'];
    const resolved = await this.deps.clients.reference.resolveNames(rpb.ResolveNamesRequest.fromPartial({ sale_types: names }));
    const [history, forecast] = resolved.sale_types?.ids ?? [];
    if (!history || !forecast) {
      throw new AppError(
        'precondition_failed',
        'This workspace has no sale types History and Forecast: forecasts are read from History sales and written as Forecast sales.',
      );
    }
    return { history: { id: history, name: names[0]! }, forecast: { id: forecast, name: names[1]! } };
  }

  /** The selection's latest History record in the window: it fixes the default history end and the dry run's dates. */
  private async latestHistory(request: ForecastRequest, series: SeriesRef[], history: NamedId): Promise<tpb.SalesRecord | null> {
    const page = await this.deps.clients.transactional.querySales({
      filter: tpb.SalesFilter.fromPartial({
        sale_type_names: [history.name],
        item_customer_group_ids: series.map((s) => s.item_customer_group_id),
        sell_date_from: request.history_start ?? '',
        sell_date_to: request.history_end ?? '',
      }),
      page: { per_page: 1, sort: [{ field: 'sell_date', descending: true }], after: '', backward: false },
      include_hierarchy: false,
    });
    return page.records[0] ?? null;
  }

  /** Registers the job, plans and queues the chunks; refuses while compute cannot take the run. */
  private async start(
    request: ForecastRequest,
    ctx: CallContext,
    plan: { scope: ForecastScope; historyEnd: string | null },
    series: SeriesRef[],
    saleTypes: { history: NamedId; forecast: NamedId },
  ): Promise<wpb.Job> {
    const tenant = ctx.requireTenant();
    const { forecasts, modelRuns, bus, clients } = this.deps;
    await bus.ping().catch(() => {
      throw unavailable(
        'Compute cannot queue work right now (the message bus is unreachable); retry shortly.',
        RETRY_AFTER_SECONDS.bus_down,
      );
    });
    if ((await forecasts.chunks.count({ state: 'pending' })) >= MAX_PENDING_CHUNKS) {
      throw unavailable('Compute has more forecast work queued than it takes on; retry shortly.', RETRY_AFTER_SECONDS.backlog);
    }
    const { _id: runId } = await modelRuns.insertOne({
      tenant,
      kind: 'forecast',
      job_id: 0,
      status: 'queued',
      created_at: new Date().toISOString(),
      finished_at: null,
    });
    try {
      await this.lockTenant(tenant, runId);
    } catch (err) {
      await modelRuns.deleteOne({ _id: runId });
      throw err;
    }
    let run: ForecastRunDoc | null = null;
    try {
      const job = await clients.workflows.createJob({ kind: FORECAST_JOB_KIND, total: series.length });
      const chunks = planChunks(series);
      const now = Date.now();
      run = {
        _id: runId,
        tenant,
        job_id: job.id,
        principal: ctx.principal!,
        phase: 'dispatching',
        scope: plan.scope,
        forecast_periods: request.forecast_periods,
        algorithm: request.algorithm,
        missing_imputation: request.missing_imputation,
        forecast_constraint: request.forecast_constraint,
        history_start: request.history_start,
        history_end: plan.historyEnd,
        sale_types: saleTypes,
        series_count: series.length,
        chunks: chunks.length,
        load_id: `forecast-run:${runId}`,
        planned_deletes: null,
        started_sent: false,
        outcome: null,
        created_at: now,
        updated_at: now,
      };
      await forecasts.runs.insertOne(run);
      await modelRuns.updateOne({ _id: runId }, { $set: { job_id: job.id } });
      await forecasts.chunks.insertMany(
        chunks.map((c) => ({
          _id: chunkId(runId, c.seq),
          run_id: runId,
          seq: c.seq,
          first_position: c.first_position,
          series: c.series,
          state: 'pending' as const,
          updated_at: now,
        })),
      );
      await Promise.all(
        chunks.map((c) =>
          bus.send(FORECAST_QUEUE, { run_id: runId, tenant, step: 'chunk', seq: c.seq }, { messageId: `forecast:${runId}:${c.seq}` }),
        ),
      );
      await forecasts.runs.updateOne({ _id: runId, phase: 'dispatching' }, { $set: { phase: 'running', updated_at: Date.now() } });
      this.deps.logger.info({ run: runId, job: job.id, series: series.length, chunks: chunks.length }, 'forecast run queued');
      return job;
    } catch (err) {
      if (run) {
        // The job exists: end it now if the bus lets us, else the sweep does.
        await this.deps.worker.abandon(run).catch(() => undefined);
      } else {
        await forecasts.locks.deleteOne({ _id: tenant, run_id: runId });
        await modelRuns.deleteOne({ _id: runId });
      }
      throw err;
    }
  }

  /** One run per tenant at a time: a run replaces the earlier forecasts of its series. */
  private async lockTenant(tenant: string, runId: number): Promise<void> {
    const { locks, runs, chunks } = this.deps.forecasts;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await locks.insertOne({ _id: tenant, run_id: runId, locked_at: Date.now() });
        return;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
      const held = await locks.findById(tenant);
      if (!held) continue;
      const running = await runs.findById(held.run_id);
      const stale = running
        ? running.phase === 'done' || running.updated_at < Date.now() - LOCK_STALE_MS
        : held.locked_at < Date.now() - STALLED_RUN_MS;
      if (stale) {
        await locks.deleteOne({ _id: tenant, run_id: held.run_id });
        continue;
      }
      const pending = running ? await chunks.count({ run_id: running._id, state: 'pending' }) : 0;
      const retryAfter = Math.min(120, Math.max(RETRY_AFTER_SECONDS.busy_tenant, pending * 2));
      throw unavailable(
        `A forecast run of this workspace is still in progress${running ? ` (job ${running.job_id})` : ''}; runs go one at a time. Retry once it has finished.`,
        retryAfter,
      );
    }
    throw unavailable('The forecast run could not be registered; retry.', RETRY_AFTER_SECONDS.busy_tenant);
  }

  /** The model chosen and the holdout error of each series of a job's run (its owner only). */
  async listSeries(request: pb.ListForecastSeriesRequest, ctx: CallContext): Promise<pb.ListForecastSeriesResponse> {
    const tenant = ctx.requireTenant();
    const run = await this.deps.forecasts.runs.findOne({ tenant, job_id: request.job_id });
    if (!run || !ctx.principal || run.principal.userId !== ctx.principal.userId)
      throw new NotFoundError(`No forecast run for job ${request.job_id}.`);
    const limit = Math.min(Math.max(request.limit || 100, 1), 1000);
    const rows = await this.deps.forecasts.results.find(
      { run_id: run._id, position: { $gte: Math.max(0, request.from_position) } },
      { sort: [['position', 1]], limit: limit + 1 },
    );
    return {
      series: rows.slice(0, limit).map((r) => ({
        series: r.series,
        position: r.position,
        status: r.status,
        model: r.model,
        holdout_error: r.holdout_error ?? 0,
        has_holdout_error: r.holdout_error !== null,
        series_class: r.series_class,
        timing_interval: r.timing_interval,
        history_periods: r.history_periods,
        forecast_start: r.forecast_start,
        forecast_end: r.forecast_end,
        message: r.message,
      })),
      has_more: rows.length > limit,
    };
  }
}

/** The first and last forecast dates after `last` on its grid, the history ending at `end`. */
function forecastWindow(last: string, frequency: Frequency, end: string, periods: number): { start: string; end: string } | null {
  const from = parseIsoDate(gridEnd(last, frequency, end));
  if (!from) return null;
  return { start: formatIsoDate(addPeriods(from, frequency, 1)), end: formatIsoDate(addPeriods(from, frequency, periods)) };
}
