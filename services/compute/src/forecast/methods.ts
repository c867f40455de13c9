/**
 * Every forecasting method addressable by name. Non-seasonal methods (SES, Holt,
 * damped, Theta, Naive2) run on the seasonally adjusted series when the
 * seasonality test finds a season, as in the M competitions.
 */
import { type EtsModel, type EtsSpec, MAX_ETS_SEASON, etsCandidates, fitEts, forecastEts, selectEts } from './ets';
import { adida, croston, sba, tsb } from './intermittent';
import { naive, seasonalNaive } from './naive';
import { type SeasonalAdjustment, reseasonalize, seasonallyAdjust } from './seasonality';
import { fitSimpleSmoothing } from './ses';
import { optimizedThetaOnAdjusted, thetaOnAdjusted } from './theta';

export const ALGORITHMS = [
  'auto',
  'ets',
  'ses',
  'holt',
  'damped',
  'holt_winters_additive',
  'holt_winters_multiplicative',
  'theta',
  'optimized_theta',
  'combination',
  'seasonal_naive',
  'naive',
  'naive2',
  'croston',
  'sba',
  'tsb',
  'adida',
] as const;
export type Algorithm = (typeof ALGORITHMS)[number];
/** A single named method (everything but the selector). */
export type Method = Exclude<Algorithm, 'auto'>;

export function isAlgorithm(value: string): value is Algorithm {
  return (ALGORITHMS as readonly string[]).includes(value);
}

/** Members of `combination`: the equal-weight mean that is hard to beat on monthly business data. */
export const COMBINATION_MEMBERS = ['damped', 'theta', 'optimized_theta'] as const satisfies readonly Method[];

export interface ModelForecast {
  forecast: number[];
  /** What actually produced the forecast, e.g. `theta`, `ets(M,Ad,M)`, or a fallback such as `ses`. */
  model: string;
}

/** A history with its seasonal adjustment computed once for all methods that need it. */
export interface PreparedHistory {
  values: readonly number[];
  period: number;
  adjustment: SeasonalAdjustment;
}

/** `seasonal` overrides the seasonality test, e.g. to keep the full history's verdict at holdout origins. */
export function prepareHistory(values: readonly number[], period: number, seasonal?: boolean): PreparedHistory {
  return { values, period, adjustment: seasonallyAdjust(values, period, seasonal) };
}

function onAdjusted(history: PreparedHistory, forecastAdjusted: number[]): number[] {
  return reseasonalize(forecastAdjusted, history.adjustment, history.values.length);
}

function etsLabel(model: EtsModel): string {
  return `ets(${model.spec.error},${model.spec.trend},${model.spec.season})`;
}

function smoothingOnAdjusted(history: PreparedHistory, horizon: number): ModelForecast {
  const level = fitSimpleSmoothing(history.adjustment.adjusted).level;
  return { forecast: onAdjusted(history, new Array<number>(horizon).fill(level)), model: 'ses' };
}

function trendOnAdjusted(history: PreparedHistory, horizon: number, damped: boolean, name: string): ModelForecast {
  const spec: EtsSpec = { error: 'A', trend: damped ? 'Ad' : 'A', season: 'N' };
  const model = fitEts(history.adjustment.adjusted, spec, 1);
  if (!model) return smoothingOnAdjusted(history, horizon);
  return { forecast: onAdjusted(history, forecastEts(model, horizon)), model: name };
}

/** ETS model selection by AICc; periods beyond ETS's reach are handled by decomposition. */
function automaticEts(history: PreparedHistory, horizon: number): ModelForecast {
  const { values, period, adjustment } = history;
  const direct = period <= MAX_ETS_SEASON || !adjustment.seasonal;
  const data = direct ? values : adjustment.adjusted;
  const model = selectEts(data, direct ? period : 1, etsCandidates(data, period, direct && adjustment.seasonal));
  if (!model) return smoothingOnAdjusted(history, horizon);
  const forecast = forecastEts(model, horizon);
  if (direct) return { forecast, model: etsLabel(model) };
  return { forecast: onAdjusted(history, forecast), model: `${etsLabel(model)}+decomposition` };
}

function holtWinters(history: PreparedHistory, horizon: number, multiplicative: boolean): ModelForecast {
  const { values, period } = history;
  const positive = values.length > 0 && values.every((v) => v > 0);
  const specs: EtsSpec[] =
    multiplicative && positive
      ? [
          { error: 'M', trend: 'A', season: 'M' },
          { error: 'M', trend: 'Ad', season: 'M' },
        ]
      : [
          { error: 'A', trend: 'A', season: 'A' },
          { error: 'A', trend: 'Ad', season: 'A' },
        ];
  const model = selectEts(values, period, specs);
  if (model) return { forecast: forecastEts(model, horizon), model: etsLabel(model) };
  // Too short or non-positive for the requested form: fall back step by step.
  if (multiplicative && positive) return holtWinters(history, horizon, false);
  return trendOnAdjusted(history, horizon, true, 'damped');
}

export function mean(forecasts: readonly (readonly number[])[]): number[] {
  const horizon = forecasts.length > 0 ? forecasts[0].length : 0;
  return Array.from({ length: horizon }, (_, j) => {
    let sum = 0;
    for (const f of forecasts) sum += f[j];
    return sum / forecasts.length;
  });
}

/** Runs one named method on a prepared history. */
export function runMethod(method: Method, history: PreparedHistory, horizon: number): ModelForecast {
  const { values, period, adjustment } = history;
  switch (method) {
    case 'naive':
      return { forecast: naive(values, horizon), model: 'naive' };
    case 'seasonal_naive':
      return period > 1 && values.length >= period
        ? { forecast: seasonalNaive(values, horizon, period), model: 'seasonal_naive' }
        : { forecast: naive(values, horizon), model: 'naive' };
    case 'naive2':
      return { forecast: onAdjusted(history, naive(adjustment.adjusted, horizon)), model: 'naive2' };
    case 'ses':
      return smoothingOnAdjusted(history, horizon);
    case 'holt':
      return trendOnAdjusted(history, horizon, false, 'holt');
    case 'damped':
      return trendOnAdjusted(history, horizon, true, 'damped');
    case 'theta':
      return { forecast: onAdjusted(history, thetaOnAdjusted(adjustment.adjusted, horizon)), model: 'theta' };
    case 'optimized_theta':
      return {
        forecast: onAdjusted(history, optimizedThetaOnAdjusted(adjustment.adjusted, horizon)),
        model: 'optimized_theta',
      };
    case 'combination':
      return {
        forecast: mean(COMBINATION_MEMBERS.map((member) => runMethod(member, history, horizon).forecast)),
        model: 'combination',
      };
    case 'ets':
      return automaticEts(history, horizon);
    case 'holt_winters_additive':
      return holtWinters(history, horizon, false);
    case 'holt_winters_multiplicative':
      return holtWinters(history, horizon, true);
    case 'croston':
      return { forecast: croston(values, horizon), model: 'croston' };
    case 'sba':
      return { forecast: sba(values, horizon), model: 'sba' };
    case 'tsb':
      return { forecast: tsb(values, horizon), model: 'tsb' };
    case 'adida':
      return { forecast: adida(values, horizon), model: 'adida' };
  }
}
