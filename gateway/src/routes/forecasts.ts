import { z } from 'zod';
import { AppError, ValidationError, isAppError, type Clients } from '@supply/kit';
import {
  DEFAULT_FORECAST_PERIODS,
  FORECAST_ALGORITHMS as ALGORITHMS,
  FORECAST_CONSTRAINTS as CONSTRAINTS,
  FORECAST_SCOPES,
  MAX_FORECAST_PERIODS,
  MAX_NAME_LENGTH,
  MISSING_IMPUTATIONS,
  SERIES_CLASSES,
  historyDateOf,
  type supply_compute_v1 as pb,
} from '@supply/contracts';
import { cursorBinding, type CursorCodec } from '../http/cursor';
import { cursorMetaSchema, defineRoute, emptyMetaSchema, linksSchema, pathId, q, type Reply, type RouteDef } from '../http/routes';
import { jobResource, jobSchema } from './jobs';
import { idempotencyKeyOf } from './workflows';

/** Resolving a scope of every series and queueing its chunks gets this long. */
const GENERATE_DEADLINE_MS = 60_000;
/** `Retry-After` when compute itself is unreachable (it names its own otherwise). */
const UNREACHABLE_RETRY_AFTER_SECONDS = 5;

const id = () => z.number().int().min(1).nullish();
const name = () => z.string().max(MAX_NAME_LENGTH).nullish();
const historyBound = (field: string, what: string) =>
  z
    .string()
    .refine((v) => v === '' || historyDateOf(v) !== null, { message: `The ${field} field must be a valid date-time.` })
    .nullish()
    .meta({ format: 'date-time', description: `${what} (inclusive): an ISO 8601 date-time, taken as its UTC date.` });

/** Every field optional (null or "" counts as absent); other fields are refused, so a misspelt one is not silently ignored. */
export const forecastBody = z.strictObject({
  item_customer_group_id: id().meta({ description: 'One series by its item-customer-group id.' }),
  item_name: name(),
  item_id: id(),
  customer_group_name: name(),
  customer_group_id: id(),
  scope: z.enum(FORECAST_SCOPES).nullish().meta({
    description:
      'series: one item-customer-group; item: every customer group of the item; customer_group: every item of the customer group; all: every series of the workspace. Default: what the identifiers name (none: all).',
  }),
  forecast_periods: z
    .number()
    .int()
    .min(1)
    .max(MAX_FORECAST_PERIODS)
    .nullish()
    .meta({
      default: DEFAULT_FORECAST_PERIODS,
      description: `Periods to forecast, on each series' own timing interval. Default ${DEFAULT_FORECAST_PERIODS}.`,
    }),
  algorithm: z
    .enum(ALGORITHMS)
    .nullish()
    .meta({ default: 'auto', description: 'auto chooses per series by class and rolling-origin holdout; a name forces that method.' }),
  missing_imputation: z
    .enum(MISSING_IMPUTATIONS)
    .nullish()
    .meta({ default: 'auto', description: 'How periods without a record are filled; auto: zero (no record means no sale).' }),
  forecast_constraint: z
    .enum(CONSTRAINTS)
    .nullish()
    .meta({ default: 'auto', description: 'auto: non-negative, whole units when the history is whole units.' }),
  history_start: historyBound('history start', 'First History date used; default: the first record'),
  history_end: historyBound('history end', "Last History date used; default: the selection's latest History date"),
  dry_run: z.boolean().nullish().meta({ default: false, description: 'true: validate and describe the run; nothing is written.' }),
});

const seriesSchema = z
  .object({
    item_customer_group_id: z.number(),
    item_id: z.number(),
    item_name: z.string(),
    customer_group_id: z.number(),
    customer_group_name: z.string(),
  })
  .meta({ id: 'ForecastSeries' });

const planSchema = z
  .object({
    scope: z.enum(FORECAST_SCOPES),
    series_count: z.number(),
    forecast_periods: z.number(),
    timing_interval: z.string().nullable(),
    history_start: z.string().nullable(),
    history_end: z.string().nullable(),
    forecast_start: z.string().nullable(),
    forecast_end: z.string().nullable(),
    algorithm: z.enum(ALGORITHMS),
    missing_imputation: z.enum(MISSING_IMPUTATIONS),
    forecast_constraint: z.enum(CONSTRAINTS),
  })
  .meta({ id: 'ForecastPlan' });

const dryRunSchema = planSchema.extend({ dry_run: z.literal(true), series: z.array(seriesSchema) }).meta({ id: 'ForecastDryRun' });
const acceptedSchema = jobSchema.extend({ forecast: planSchema }).meta({ id: 'ForecastJob' });

function planOf(plan: pb.ForecastPlan): z.infer<typeof planSchema> {
  return {
    scope: plan.scope as z.infer<typeof planSchema>['scope'],
    series_count: plan.series_count,
    forecast_periods: plan.forecast_periods,
    timing_interval: plan.timing_interval || null,
    history_start: plan.history_start || null,
    history_end: plan.history_end || null,
    forecast_start: plan.forecast_start || null,
    forecast_end: plan.forecast_end || null,
    algorithm: plan.algorithm as z.infer<typeof planSchema>['algorithm'],
    missing_imputation: plan.missing_imputation as z.infer<typeof planSchema>['missing_imputation'],
    forecast_constraint: plan.forecast_constraint as z.infer<typeof planSchema>['forecast_constraint'],
  };
}

function present(tenant: string, answer: pb.GenerateForecastsResponse): Reply {
  const headers: Record<string, string> = answer.replayed ? { 'Idempotent-Replayed': 'true' } : {};
  const plan = planOf(answer.plan!);
  if (answer.outcome?.$case === 'job') {
    const job = answer.outcome.job;
    const location = `/${tenant}/api/v1/jobs/${job.id}`;
    return {
      kind: 'envelope',
      status: 202,
      message: `The forecast run was accepted as job ${job.id}; follow it at GET ${location}.`,
      data: [{ ...jobResource(job), forecast: plan } satisfies z.infer<typeof acceptedSchema>],
      headers: { ...headers, Location: location },
    };
  }
  const interval = plan.timing_interval ? ` ${plan.timing_interval}` : '';
  return {
    kind: 'envelope',
    status: 200,
    message: `Dry run completed: the forecast request validated. ${plan.series_count} series would be forecast, ${plan.forecast_periods}${interval} periods each; nothing was written.`,
    data: [{ dry_run: true, ...plan, series: answer.series.map((s) => ({ ...s })) } satisfies z.infer<typeof dryRunSchema>],
    headers,
  };
}

/** Compute unreachable (no answer of its own): still a 503 a client can schedule a retry by. */
function withRetryAfter(err: unknown): unknown {
  if (!isAppError(err) || err.code !== 'unavailable' || (err.details.headers as Record<string, string> | undefined)?.['Retry-After'])
    return err;
  return new AppError('unavailable', 'Compute cannot take work right now; retry shortly.', {
    ...err.details,
    headers: { 'Retry-After': String(UNREACHABLE_RETRY_AFTER_SECONDS) },
  });
}

// ---------------------------------------------------------------- run diagnostics

const RUNS_PER_PAGE = { default: 25, max: 100 };
const SERIES_PER_PAGE = { default: 100, max: 1000 };
const RUN_STATUSES = ['queued', 'running', 'succeeded', 'partially_succeeded', 'failed'] as const;
const SERIES_STATUSES = ['forecast', 'skipped', 'failed'] as const;
const SERIES_FILTERS = ['item_name', 'customer_group_name', 'model', 'series_class', 'status'] as const;
type SeriesFilterName = (typeof SERIES_FILTERS)[number];
/** Values one comma list filter takes. */
const MAX_FILTER_VALUES = 100;

const nullableNumber = (description: string) => z.number().nullable().describe(description);

const accuracySchema = z
  .object({
    series: z.number().int().describe('Series with a validation; the means are over these'),
    mean_mase: nullableNumber('Mean holdout MASE (scaled by the in-sample seasonal naive MAE)'),
    median_mase: nullableNumber('Median holdout MASE'),
    mean_rmsse: nullableNumber('Mean holdout RMSSE'),
    mean_bias: nullableNumber('Mean holdout bias: mean(forecast - actual) / mean |history|'),
  })
  .meta({ id: 'ForecastAccuracySummary' });

const runSchema = z
  .object({
    id: z.number().int(),
    job_id: z.number().int(),
    status: z.enum(RUN_STATUSES),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    scope: z.enum(FORECAST_SCOPES),
    algorithm: z.enum(ALGORITHMS),
    forecast_periods: z.number().int(),
    history_start: z.string().nullable(),
    history_end: z.string().nullable(),
    counts: z.object({
      series: z.number().int().describe('Series selected'),
      forecast: z.number().int(),
      skipped: z.number().int().describe('No History sales in the history window'),
      failed: z.number().int(),
    }),
    accuracy: accuracySchema.nullable().describe('Summary of the series validations; null until the run has finished'),
  })
  .meta({ id: 'ForecastRun' });

const periodSchema = z
  .object({
    date: z.string(),
    forecast: z.number(),
    lo80: z.number(),
    hi80: z.number(),
    lo95: z.number(),
    hi95: z.number(),
  })
  .meta({ id: 'ForecastPeriod', description: 'The forecast written for the period and its 80% and 95% prediction intervals' });

const diagnosticsSchema = z
  .object({
    item_customer_group_id: z.number().int(),
    item_id: z.number().int(),
    item_name: z.string(),
    customer_group_id: z.number().int(),
    customer_group_name: z.string(),
    position: z.number().int().describe("0-based place in the run's series order (the job's error row)"),
    status: z.enum(SERIES_STATUSES),
    model: z.string().nullable().describe('e.g. theta, croston_sba, ets(A,Ad,N); null when not forecast'),
    parameters: z
      .record(z.string(), z.number())
      .describe(
        'Fitted parameters of the model (smoothing constants, damping, theta...); spikes_replaced when the automatic forecast fitted the history without isolated spikes',
      ),
    validation: z
      .object({ mase: z.number().nullable(), rmsse: z.number().nullable(), bias: z.number().nullable() })
      .nullable()
      .describe("Accuracy on the rolling-origin holdout of the series' own history; null when not measured"),
    series_class: z.enum(SERIES_CLASSES).nullable().describe('Demand class (Syntetos-Boylan); null when not forecast'),
    timing_interval: z.string().nullable(),
    history_periods: z.number().int(),
    periods: z.array(periodSchema),
    message: z.string().nullable().describe('Why the series was skipped or failed'),
  })
  .meta({ id: 'ForecastSeriesDiagnostics' });

const runDetailSchema = runSchema
  .extend({ series: z.array(diagnosticsSchema).describe('One page of the series diagnostics, in position order') })
  .meta({ id: 'ForecastRunDetail' });

function runResource(run: pb.ForecastRun): z.infer<typeof runSchema> {
  const a = run.accuracy;
  return {
    id: run.id,
    job_id: run.job_id,
    status: run.status as z.infer<typeof runSchema>['status'],
    created_at: run.created_at,
    finished_at: run.finished_at || null,
    scope: run.scope as z.infer<typeof runSchema>['scope'],
    algorithm: run.algorithm as z.infer<typeof runSchema>['algorithm'],
    forecast_periods: run.forecast_periods,
    history_start: run.history_start || null,
    history_end: run.history_end || null,
    counts: { series: run.series_count, forecast: run.forecast_count, skipped: run.skipped_count, failed: run.failed_count },
    accuracy: a
      ? {
          series: a.series,
          mean_mase: a.mean_mase ?? null,
          median_mase: a.median_mase ?? null,
          mean_rmsse: a.mean_rmsse ?? null,
          mean_bias: a.mean_bias ?? null,
        }
      : null,
  };
}

function seriesResource(d: pb.ForecastSeriesDiagnostics): z.infer<typeof diagnosticsSchema> {
  const s = d.series!;
  return {
    item_customer_group_id: s.item_customer_group_id,
    item_id: s.item_id,
    item_name: s.item_name,
    customer_group_id: s.customer_group_id,
    customer_group_name: s.customer_group_name,
    position: d.position,
    status: d.status as z.infer<typeof diagnosticsSchema>['status'],
    model: d.model || null,
    parameters: { ...d.parameters },
    validation: d.validation
      ? { mase: d.validation.mase ?? null, rmsse: d.validation.rmsse ?? null, bias: d.validation.bias ?? null }
      : null,
    series_class: (d.series_class || null) as z.infer<typeof diagnosticsSchema>['series_class'],
    timing_interval: d.timing_interval || null,
    history_periods: d.history_periods,
    periods: d.periods.map((p) => ({ date: p.date, forecast: p.forecast, lo80: p.lo80, hi80: p.hi80, lo95: p.lo95, hi95: p.hi95 })),
    message: d.message || null,
  };
}

const invalidQuery = (detail: string) => new AppError('invalid_query', detail, { problem: 'invalid-query' });

/** `filter[name]=a,b` for the series diagnostics: unknown names 400, non-string values 422. */
function seriesFilterOf(raw: unknown): Record<SeriesFilterName, string[]> {
  const allowed = SERIES_FILTERS.map((f) => `filter[${f}]`).join(', ');
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw)))
    throw invalidQuery(`Filters are written filter[name]=value; names: ${allowed}.`);
  const given = (raw ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (!(SERIES_FILTERS as readonly string[]).includes(name))
      throw invalidQuery(`Unknown filter ${JSON.stringify(name)}; allowed: ${allowed}.`);
  }
  const errors: Record<string, string[]> = {};
  const filter = {} as Record<SeriesFilterName, string[]>;
  for (const name of SERIES_FILTERS) {
    const value = given[name];
    filter[name] = [];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length > MAX_FILTER_VALUES * 256) {
      errors[`filter.${name}`] = [`The filter.${name} field must be a string.`];
      continue;
    }
    const list = [
      ...new Set(
        value
          .split(',')
          .map((v) => v.trim().toLowerCase())
          .filter(Boolean),
      ),
    ].sort();
    if (list.length > MAX_FILTER_VALUES)
      errors[`filter.${name}`] = [`The filter.${name} field must not have more than ${MAX_FILTER_VALUES} values.`];
    else if (list.some((v) => v.length > 255))
      errors[`filter.${name}`] = [`The filter.${name} values must not be greater than 255 characters.`];
    filter[name] = list;
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return filter;
}

/** A cursor's keyset position: a non-negative integer written as text (anything else was not signed by us). */
function positionOf(position: string): number {
  const n = Number(position);
  if (!Number.isSafeInteger(n) || n < 0) throw new ValidationError({ cursor: ['The cursor is invalid or belongs to another query.'] });
  return n;
}

function paginationOf(
  cursors: CursorCodec,
  binding: string,
  input: { per_page: number },
  count: number,
  hasMoreRead: boolean,
  backward: boolean,
  came: boolean,
  first: number | null,
  last: number | null,
) {
  // Walking back, the page we came from lies ahead; walking on, a cursor means pages lie behind.
  const hasMore = backward ? count > 0 : hasMoreRead;
  const hasBefore = backward ? hasMoreRead : came && count > 0;
  return {
    pagination: {
      result_count: count,
      per_page: input.per_page,
      has_more: hasMore,
      next_cursor: hasMore && last !== null ? cursors.encode(binding, 'next', String(last)) : null,
      prev_cursor: hasBefore && first !== null ? cursors.encode(binding, 'prev', String(first)) : null,
    },
  };
}

const cursorParam = () =>
  z.string().max(4096).optional().describe('next_cursor or prev_cursor of a previous page; omitted on the first request');

export function forecastRoutes(clients: Clients, cursors: CursorCodec): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/forecasts/runs',
      summary:
        "The workspace's forecast runs, newest first: job, status, series counts and summary validation accuracy (cursor pagination)",
      tag: 'Forecasts',
      access: { kind: 'token', scope: 'public_api.read', module: 'demand', level: 'view', cost: 'read' },
      dialect: 'current',
      query: z.object({
        cursor: cursorParam(),
        per_page: q.int(1, RUNS_PER_PAGE.max).default(RUNS_PER_PAGE.default),
      }),
      response: z.object({ data: z.array(runSchema), meta: cursorMetaSchema, links: linksSchema }),
      async handler({ query, params }) {
        const binding = cursorBinding({ resource: 'forecasts/runs', tenant: params.tenant });
        const cursor = query.cursor ? cursors.decode(binding, query.cursor) : undefined;
        const backward = cursor?.direction === 'prev';
        const answer = await clients.compute.listForecastRuns({
          per_page: query.per_page,
          after_id: cursor ? positionOf(cursor.position) : 0,
          backward,
        });
        const data = answer.runs.map(runResource);
        // Newest first: the position of a run is its id, read downwards.
        const meta = paginationOf(
          cursors,
          binding,
          query,
          data.length,
          answer.has_more,
          backward,
          cursor !== undefined,
          data[0]?.id ?? null,
          data[data.length - 1]?.id ?? null,
        );
        return { kind: 'envelope', data, meta };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/forecasts/runs/:run_id',
      summary:
        'A forecast run with a page of its series diagnostics: model, parameters, validation accuracy (MASE, RMSSE, bias), demand class, 80%/95% intervals; filterable by item, customer group, model, class and status (cursor pagination)',
      tag: 'Forecasts',
      access: { kind: 'token', scope: 'public_api.read', module: 'demand', level: 'view', cost: 'read' },
      dialect: 'current',
      query: z.object({
        cursor: cursorParam(),
        per_page: q.int(1, SERIES_PER_PAGE.max).default(SERIES_PER_PAGE.default),
        filter: z
          .unknown()
          .optional()
          .describe(
            `filter[name]=a,b (comma lists, case-insensitive); names: ${SERIES_FILTERS.join(', ')}; a model filter matches the model or its family (ets matches ets(A,Ad,N))`,
          )
          .meta({
            type: 'object',
            properties: Object.fromEntries(SERIES_FILTERS.map((name) => [name, { type: 'string' }])),
            additionalProperties: false,
          }),
      }),
      response: z.object({ data: z.array(runDetailSchema), meta: cursorMetaSchema, links: linksSchema }),
      async handler({ query, params }) {
        const runId = pathId(params.run_id, 'forecast run');
        const filter = seriesFilterOf(query.filter);
        const binding = cursorBinding({ resource: 'forecasts/runs/series', tenant: params.tenant, run: runId, filter });
        const cursor = query.cursor ? cursors.decode(binding, query.cursor) : undefined;
        const backward = cursor?.direction === 'prev';
        const answer = await clients.compute.getForecastRun({
          run_id: runId,
          filter: {
            item_names: filter.item_name,
            customer_group_names: filter.customer_group_name,
            models: filter.model,
            series_classes: filter.series_class,
            statuses: filter.status,
          },
          per_page: query.per_page,
          after_position: cursor ? positionOf(cursor.position) : -1,
          backward,
        });
        const series = answer.series.map(seriesResource);
        const meta = paginationOf(
          cursors,
          binding,
          query,
          series.length,
          answer.has_more,
          backward,
          cursor !== undefined,
          series[0]?.position ?? null,
          series[series.length - 1]?.position ?? null,
        );
        return { kind: 'envelope', data: [{ ...runResource(answer.run!), series }], meta };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/:tenant/api/v1/forecasts/generate',
      summary:
        'Generate forecasts (written as sales of sale type Forecast): 202 with a job, or 200 for a dry run; 503 with Retry-After while compute cannot take work; Idempotency-Key supported',
      tag: 'Forecasts',
      access: { kind: 'token', scope: 'public_api.compute', module: 'demand', level: 'planner', cost: 'compute' },
      dialect: 'current',
      accepts: 'json',
      body: forecastBody,
      response: z.object({
        message: z.string(),
        data: z.array(z.union([acceptedSchema, dryRunSchema])),
        meta: emptyMetaSchema,
        links: linksSchema,
      }),
      successStatus: 202,
      alsoAnswers: [200],
      serviceIdempotency: true,
      async handler({ body, req, params }) {
        const bound = (value: string | null | undefined) => (value ? historyDateOf(value)! : '');
        const request: pb.GenerateForecastsRequest = {
          item_customer_group_id: body.item_customer_group_id ?? 0,
          item_name: body.item_name ?? '',
          item_id: body.item_id ?? 0,
          customer_group_name: body.customer_group_name ?? '',
          customer_group_id: body.customer_group_id ?? 0,
          scope: body.scope ?? '',
          forecast_periods: body.forecast_periods ?? 0,
          algorithm: body.algorithm ?? '',
          missing_imputation: body.missing_imputation ?? '',
          forecast_constraint: body.forecast_constraint ?? '',
          history_start: bound(body.history_start),
          history_end: bound(body.history_end),
          dry_run: body.dry_run ?? false,
          idempotency_key: idempotencyKeyOf(req),
        };
        try {
          return present(params.tenant!, await clients.compute.generateForecasts(request, { deadlineMs: GENERATE_DEADLINE_MS }));
        } catch (err) {
          throw withRetryAfter(err);
        }
      },
    }),
  ];
}
