/**
 * Forecast run diagnostics (ListForecastRuns, GetForecastRun): the tenant's runs with
 * their counts and summary accuracy, and per series the model chosen, its parameters,
 * validation accuracy, demand class and prediction intervals. Runs are the tenant's: any
 * other tenant's run id is not found.
 */
import { NotFoundError, ValidationError, type CallContext, type Filter } from '@supply/kit';
import type { supply_compute_v1 as pb } from '@supply/contracts';
import type { AccuracySummary, ForecastCollections, ForecastRunDoc, SeriesResultDoc, SeriesValidation } from './repository';

/** Page size bounds of both reads. */
export const MAX_PER_PAGE = 1000;
const DEFAULT_PER_PAGE = 100;
/** Values one filter list takes. */
const MAX_FILTER_VALUES = 100;

const mean = (values: readonly number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Means (and the median MASE) over the validations given, each measure over the series that have it. */
export function summarizeAccuracy(validations: readonly SeriesValidation[]): AccuracySummary {
  const of = (key: keyof SeriesValidation) => validations.map((v) => v[key]).filter((x): x is number => x !== null && Number.isFinite(x));
  const mase = of('mase');
  return {
    series: validations.length,
    mean_mase: mean(mase),
    median_mase: median(mase),
    mean_rmsse: mean(of('rmsse')),
    mean_bias: mean(of('bias')),
  };
}

const optional = (value: number | null | undefined) => (value === null || value === undefined ? undefined : value);

function statusOf(run: ForecastRunDoc): string {
  if (run.outcome) return run.outcome.status;
  return run.started_sent ? 'running' : 'queued';
}

const iso = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : '');

export function presentRun(run: ForecastRunDoc, counts: { forecast: number; skipped: number; failed: number }): pb.ForecastRun {
  const accuracy = run.outcome && run.accuracy ? run.accuracy : null;
  return {
    id: run._id,
    job_id: run.job_id,
    status: statusOf(run),
    created_at: iso(run.created_at),
    finished_at: run.outcome ? iso(run.finished_at ?? run.updated_at) : '',
    scope: run.scope,
    algorithm: run.algorithm,
    forecast_periods: run.forecast_periods,
    series_count: run.series_count,
    forecast_count: counts.forecast,
    skipped_count: counts.skipped,
    failed_count: counts.failed,
    accuracy: accuracy
      ? {
          series: accuracy.series,
          mean_mase: optional(accuracy.mean_mase),
          median_mase: optional(accuracy.median_mase),
          mean_rmsse: optional(accuracy.mean_rmsse),
          mean_bias: optional(accuracy.mean_bias),
        }
      : undefined,
    history_start: run.history_start ?? '',
    history_end: run.history_end ?? '',
  };
}

export function presentSeries(r: SeriesResultDoc): pb.ForecastSeriesDiagnostics {
  const iv = r.intervals;
  return {
    series: { ...r.series },
    position: r.position,
    status: r.status,
    model: r.model,
    parameters: { ...(r.parameters ?? {}) },
    validation: r.validation
      ? { mase: optional(r.validation.mase), rmsse: optional(r.validation.rmsse), bias: optional(r.validation.bias) }
      : undefined,
    series_class: r.series_class,
    timing_interval: r.timing_interval,
    history_periods: r.history_periods,
    periods: iv
      ? r.forecast_dates.map((date, k) => ({
          date,
          forecast: iv.forecast[k]!,
          lo80: iv.lo80[k]!,
          hi80: iv.hi80[k]!,
          lo95: iv.lo95[k]!,
          hi95: iv.hi95[k]!,
        }))
      : [],
    message: r.message,
  };
}

function perPage(value: number): number {
  if (value === 0) return DEFAULT_PER_PAGE;
  if (!Number.isInteger(value) || value < 1 || value > MAX_PER_PAGE)
    throw new ValidationError({ per_page: [`The per page must be between 1 and ${MAX_PER_PAGE}.`] });
  return value;
}

/** Lower-cased distinct values of one filter list (null: not filtered). */
function values(field: string, list: readonly string[]): string[] | null {
  const distinct = [...new Set(list.map((v) => v.trim().toLowerCase()).filter(Boolean))];
  if (distinct.length > MAX_FILTER_VALUES)
    throw new ValidationError({ [`filter.${field}`]: [`The filter.${field} field must not have more than ${MAX_FILTER_VALUES} values.`] });
  return distinct.length > 0 ? distinct : null;
}

export function seriesFilter(runId: number, filter: pb.ForecastSeriesFilter | undefined): Filter {
  const query: Filter = { run_id: runId };
  const items = values('item_name', filter?.item_names ?? []);
  const groups = values('customer_group_name', filter?.customer_group_names ?? []);
  const models = values('model', filter?.models ?? []);
  const classes = values('series_class', filter?.series_classes ?? []);
  const statuses = values('status', filter?.statuses ?? []);
  if (items) query['keys.item'] = { $in: items };
  if (groups) query['keys.customer_group'] = { $in: groups };
  if (models) query.$or = [{ 'keys.model': { $in: models } }, { 'keys.family': { $in: models } }];
  if (classes) query.series_class = { $in: classes };
  if (statuses) query.status = { $in: statuses };
  return query;
}

export class ForecastDiagnostics {
  constructor(private readonly forecasts: ForecastCollections) {}

  private async counts(runId: number) {
    const { results } = this.forecasts;
    const [forecast, skipped, failed] = await Promise.all(
      (['forecast', 'skipped', 'failed'] as const).map((status) => results.count({ run_id: runId, status })),
    );
    return { forecast: forecast!, skipped: skipped!, failed: failed! };
  }

  /** The tenant's runs, newest first, by keyset on the run id. */
  async listRuns(request: pb.ListForecastRunsRequest, ctx: CallContext): Promise<pb.ListForecastRunsResponse> {
    const tenant = ctx.requireTenant();
    const limit = perPage(request.per_page);
    const after = request.after_id > 0 ? request.after_id : null;
    const filter: Filter = after === null ? { tenant } : { tenant, _id: request.backward ? { $gt: after } : { $lt: after } };
    const rows = await this.forecasts.runs.find(filter, { sort: [['_id', request.backward ? 1 : -1]], limit: limit + 1 });
    const page = rows.slice(0, limit);
    if (request.backward) page.reverse();
    const runs = await Promise.all(page.map(async (run) => presentRun(run, await this.counts(run._id))));
    return { runs, has_more: rows.length > limit };
  }

  /** One run of the tenant and a page of its series diagnostics in position order. */
  async getRun(request: pb.GetForecastRunRequest, ctx: CallContext): Promise<pb.GetForecastRunResponse> {
    const tenant = ctx.requireTenant();
    const run = await this.forecasts.runs.findById(request.run_id);
    if (!run || run.tenant !== tenant) throw new NotFoundError(`No forecast run ${request.run_id}.`);
    const limit = perPage(request.per_page);
    const filter = seriesFilter(run._id, request.filter);
    if (request.after_position >= 0) filter.position = request.backward ? { $lt: request.after_position } : { $gt: request.after_position };
    const rows = await this.forecasts.results.find(filter, {
      sort: [
        ['run_id', 1],
        ['position', request.backward ? -1 : 1],
      ],
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    if (request.backward) page.reverse();
    return { run: presentRun(run, await this.counts(run._id)), series: page.map(presentSeries), has_more: rows.length > limit };
  }
}
