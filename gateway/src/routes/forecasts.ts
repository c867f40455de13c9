import { z } from 'zod';
import { AppError, isAppError, type Clients } from '@supply/kit';
import type { supply_compute_v1 as pb } from '@supply/protos';
import {
  ALGORITHMS,
  CONSTRAINTS,
  DEFAULT_FORECAST_PERIODS,
  FORECAST_SCOPES,
  MAX_FORECAST_PERIODS,
  MAX_NAME_LENGTH,
  MISSING_IMPUTATIONS,
  historyDateOf,
} from '@supply/compute/forecasting/request';
import { defineRoute, type Reply, type RouteDef } from '../http/routes';
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
    .meta({ default: DEFAULT_FORECAST_PERIODS, description: `Periods to forecast, on each series' own timing interval. Default ${DEFAULT_FORECAST_PERIODS}.` }),
  algorithm: z.enum(ALGORITHMS).nullish().meta({ default: 'auto', description: 'auto chooses per series by class and rolling-origin holdout; a name forces that method.' }),
  missing_imputation: z.enum(MISSING_IMPUTATIONS).nullish().meta({ default: 'auto', description: 'How periods without a record are filled; auto: zero (no record means no sale).' }),
  forecast_constraint: z.enum(CONSTRAINTS).nullish().meta({ default: 'auto', description: 'auto: non-negative, whole units when the history is whole units.' }),
  history_start: historyBound('history start', 'First History date used; default: the first record'),
  history_end: historyBound('history end', "Last History date used; default: the selection's latest History date"),
  dry_run: z.boolean().nullish().meta({ default: false, description: 'true: validate and describe the run; nothing is written.' }),
});

const seriesSchema = z.object({
  item_customer_group_id: z.number(),
  item_id: z.number(),
  item_name: z.string(),
  customer_group_id: z.number(),
  customer_group_name: z.string(),
});

const planSchema = z.object({
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
});

const dryRunSchema = planSchema.extend({ dry_run: z.literal(true), series: z.array(seriesSchema) });
const acceptedSchema = jobSchema.extend({ forecast: planSchema });

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
  if (!isAppError(err) || err.code !== 'unavailable' || (err.details.headers as Record<string, string> | undefined)?.['Retry-After']) return err;
  return new AppError('unavailable', 'Compute cannot take work right now; retry shortly.', {
    ...err.details,
    headers: { 'Retry-After': String(UNREACHABLE_RETRY_AFTER_SECONDS) },
  });
}

export function forecastRoutes(clients: Clients): RouteDef[] {
  return [
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
      response: z.object({ message: z.string(), data: z.array(z.union([acceptedSchema, dryRunSchema])), meta: z.object({}), links: z.string() }),
      successStatus: 202,
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
