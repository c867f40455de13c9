/**
 * Forecasting entry points: one series of values, one dated series, or a batch.
 */
import { seasonalNaiveScale } from './accuracy';
import { CONTINUOUS_CANDIDATES, INTERMITTENT_CANDIDATES, type Selection, methodHoldout, runMethods, selectMethod } from './auto';
import { type Frequency, SEASONAL_PERIODS, futureDates } from './calendar';
import { type SeriesClass, classifySeries, isIntermittentClass } from './classify';
import { type PredictionIntervals, errorShape, intervalMultipliers, predictionIntervals } from './intervals';
import { type Algorithm, type Method, type ModelParameters, isAlgorithm, seasonalModelsApply } from './methods';
import { naive } from './naive';
import {
  type Constraint,
  type DatedValue,
  type MissingImputation,
  applyConstraint,
  hasNegative,
  imputeMissing,
  isConstraint,
  isMissingImputation,
  resolveConstraint,
  toPeriodSeries,
  withoutIsolatedSpikes,
} from './prepare';
import { seasonallyAdjust } from './seasonality';

export interface ForecastOptions {
  /** Number of future periods. */
  horizon: number;
  /** Season length in periods (1 = no seasonality); see SEASONAL_PERIODS. */
  period: number;
  /** `auto` (default) chooses per series; any other name forces that method. */
  algorithm?: Algorithm;
  /** Default `auto`: non-negative, whole units when the history is whole units. */
  constraint?: Constraint;
  /**
   * Whether to measure the rolling-origin holdout error of a forced method
   * (it refits the method several times). `auto` always measures it.
   */
  evaluate?: boolean;
}

/** Accuracy of the chosen method on the rolling-origin holdout of the series' own history. */
export interface ValidationAccuracy {
  /** Holdout MAE over the in-sample seasonal naive MAE; null without a usable scale. */
  mase: number | null;
  /** Root of holdout MSE over the in-sample mean squared one-step change; null when the history never changes. */
  rmsse: number | null;
  /** Mean of forecast - actual over the mean absolute history; null for an all-zero history. */
  bias: number | null;
}

export interface SeriesForecast {
  forecast: number[];
  /** Method that produced the forecast (see `ModelForecast.model`). */
  model: string;
  /** Mean absolute error of that method on the rolling-origin holdout; null when not measured. */
  holdoutError: number | null;
  seriesClass: SeriesClass;
  /** 80% and 95% prediction intervals, one value per forecast period; never below zero for non-negative data. */
  intervals: PredictionIntervals;
  /** Fitted parameters of the model (smoothing constants, damping, theta, bucket...). */
  parameters: ModelParameters;
  /** Holdout accuracy of the chosen method; null when not measured or the history is too short. */
  validation: ValidationAccuracy | null;
}

function assertOptions(options: ForecastOptions): void {
  const { horizon, period, algorithm, constraint } = options;
  if (!Number.isInteger(horizon) || horizon < 0) throw new RangeError(`horizon must be a non-negative integer, got ${horizon}`);
  if (!Number.isInteger(period) || period < 1) throw new RangeError(`period must be a positive integer, got ${period}`);
  if (algorithm !== undefined && !isAlgorithm(algorithm)) throw new RangeError(`unknown algorithm "${algorithm}"`);
  if (constraint !== undefined && !isConstraint(constraint)) throw new RangeError(`unknown constraint "${constraint}"`);
}

function isConstant(values: readonly number[]): boolean {
  return values.every((v) => v === values[0]);
}

/** Periods of sales after a run of leading zeros that show an item was launched rather than intermittent. */
export const MIN_LAUNCHED_PERIODS = 4;

/**
 * The history from the first sale on, when the leading zeros are the time before a launch: what
 * follows the first sale is at least MIN_LAUNCHED_PERIODS long and not intermittent by the
 * Syntetos-Boylan classes. Counted in, those zeros made a new item "intermittent" (30 months of
 * nothing, then 20, 40, ..., 100 a month was forecast at 2 a month) and pulled every level
 * towards zero. An item that sells now and then keeps its zeros: they are how it sells.
 */
export function sinceLaunch(values: readonly number[]): readonly number[] {
  const first = values.findIndex((v) => v !== 0);
  if (first <= 0 || values.length - first < MIN_LAUNCHED_PERIODS) return values;
  const selling = values.slice(first);
  return isIntermittentClass(classifySeries(selling).seriesClass) ? values : selling;
}

/**
 * Forecasts one series of equally spaced values (oldest first), from its launch on
 * (sinceLaunch). Deterministic; never returns NaN or Infinity: a method that fails
 * numerically is replaced by the naive forecast.
 */
export function forecastSeries(values: readonly number[], options: ForecastOptions): SeriesForecast {
  assertOptions(options);
  values.forEach((v, t) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new RangeError(`value ${t} is not a finite number: ${v}`);
  });
  values = sinceLaunch(values);
  const { horizon, period } = options;
  const algorithm = options.algorithm ?? 'auto';
  const constraint = options.constraint ?? 'auto';
  // The constraint follows the history as recorded (a spike's replacement need not be a whole number).
  const mode = resolveConstraint(constraint, values);
  let { seriesClass } = classifySeries(values);
  const intermittent = isIntermittentClass(seriesClass);
  // The automatic forecast fits continuous demand without its isolated spikes (for intermittent demand a rare
  // large order is how it sells); a named algorithm runs as published, on the history as given.
  let spikes = 0;
  if (!intermittent && algorithm === 'auto') {
    const cleaned = withoutIsolatedSpikes(values, period);
    if (cleaned.replaced > 0) {
      values = cleaned.values;
      spikes = cleaned.replaced;
      seriesClass = classifySeries(values).seriesClass;
    }
  }

  const evaluate = algorithm === 'auto' || (options.evaluate ?? true);
  let selection: Selection;
  if (values.length <= 1 || isConstant(values)) {
    // Nothing to learn beyond the level; every method would reproduce it.
    selection = methodHoldout(values, period, horizon, 'naive');
  } else if (algorithm === 'auto') {
    let candidates = intermittent ? INTERMITTENT_CANDIDATES : CONTINUOUS_CANDIDATES;
    if (!intermittent && !seasonalModelsApply(values, period)) candidates = candidates.filter((m) => m !== 'seasonal_naive');
    selection = selectMethod(values, period, horizon, candidates, intermittent);
  } else {
    // The holdout is run even when not reported: it calibrates the intervals.
    selection = methodHoldout(values, period, horizon, algorithm);
  }
  const method: Method = selection.method;

  let result = runMethods(values, period, [method], horizon, undefined, selection.weights).get(method) ?? { forecast: [], model: method };
  if (result.forecast.length !== horizon || !result.forecast.every(Number.isFinite)) {
    result = { forecast: naive(values, horizon), model: 'naive' };
  }
  let holdoutError = evaluate ? selection.holdoutError : null;
  if (holdoutError !== null && !Number.isFinite(holdoutError)) holdoutError = null;
  const forecast = applyConstraint(result.forecast, mode, values);
  return {
    forecast,
    model: result.model,
    holdoutError,
    seriesClass,
    intervals: intervalsFor(values, period, intermittent, selection, result.forecast, forecast, mode),
    parameters: spikes > 0 ? { ...result.parameters, spikes_replaced: spikes } : (result.parameters ?? {}),
    validation: evaluate ? validationAccuracy(values, period, selection) : null,
  };
}

function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function validationAccuracy(values: readonly number[], period: number, selection: Selection): ValidationAccuracy | null {
  const score = selection.score;
  if (!score || !Number.isFinite(score.mae)) return null;
  const scale = seasonalNaiveScale(values, period);
  let squaredChange = 0;
  for (let t = 1; t < values.length; t++) squaredChange += (values[t] - values[t - 1]) ** 2;
  squaredChange /= Math.max(1, values.length - 1);
  const level = values.reduce((sum, v) => sum + Math.abs(v), 0) / Math.max(1, values.length);
  return {
    mase: scale === null ? null : finiteOrNull(score.mae / scale),
    rmsse: squaredChange > 0 ? finiteOrNull(Math.sqrt(score.mse / squaredChange)) : null,
    bias: level > 0 ? finiteOrNull(score.bias / level) : null,
  };
}

/** Intervals around the raw forecast, shaped like the point forecast's constraint (zero floor, whole units). */
function intervalsFor(
  values: readonly number[],
  period: number,
  intermittent: boolean,
  selection: Selection,
  raw: readonly number[],
  constrained: readonly number[],
  mode: Exclude<Constraint, 'auto'>,
): PredictionIntervals {
  // Intermittent methods work on the raw series, so their spread is measured there too.
  const shape = errorShape(seasonallyAdjust(values, period, intermittent ? false : undefined));
  const holdout = selection.score && selection.plan ? { cuts: selection.plan.cuts, errors: selection.score.errors } : null;
  const nonNegative = mode !== 'none' || !hasNegative(values);
  const intervals = predictionIntervals(raw, values.length, shape, intervalMultipliers(shape, holdout, !intermittent), nonNegative);
  const whole = mode === 'integer';
  for (let j = 0; j < constrained.length; j++) {
    for (const level of [80, 95] as const) {
      // Near the largest double the spread overflows (Infinity, or NaN where two overflows meet).
      let lo = intervals[`lo${level}`][j];
      let hi = intervals[`hi${level}`][j];
      if (Number.isNaN(lo)) lo = nonNegative ? 0 : -Infinity;
      if (Number.isNaN(hi)) hi = Infinity;
      if (whole) {
        lo = Math.floor(lo + 1e-9);
        hi = Math.ceil(hi - 1e-9);
      }
      // A bound is still a number: JSON has no Infinity.
      intervals[`lo${level}`][j] = Math.max(-Number.MAX_VALUE, Math.min(lo, constrained[j]));
      intervals[`hi${level}`][j] = Math.min(Number.MAX_VALUE, Math.max(hi, constrained[j]));
    }
  }
  return intervals;
}

export interface DatedForecastOptions {
  horizon: number;
  frequency: Frequency;
  algorithm?: Algorithm;
  constraint?: Constraint;
  /** How periods without a record are filled; default `auto` (zero sales). */
  missingImputation?: MissingImputation;
  /** Season length override; defaults to SEASONAL_PERIODS[frequency]. */
  period?: number;
  evaluate?: boolean;
}

export interface DatedSeriesForecast extends SeriesForecast {
  /** ISO dates of the forecast periods, continuing the grid after the last history date. */
  dates: string[];
}

/** Forecasts one series given as dated values (any order) on the frequency grid. */
export function forecastDatedSeries(points: readonly DatedValue[], options: DatedForecastOptions): DatedSeriesForecast {
  const imputation = options.missingImputation ?? 'auto';
  if (!isMissingImputation(imputation)) throw new RangeError(`unknown missing_imputation "${imputation}"`);
  const grid = toPeriodSeries(points, options.frequency);
  const values = imputeMissing(grid.values, imputation);
  const result = forecastSeries(values, {
    horizon: options.horizon,
    period: options.period ?? SEASONAL_PERIODS[options.frequency],
    algorithm: options.algorithm,
    constraint: options.constraint,
    evaluate: options.evaluate,
  });
  return { ...result, dates: futureDates(grid.lastDate, options.frequency, options.horizon) };
}

export interface BatchItem {
  id: string;
  points: readonly DatedValue[];
}

export interface BatchResult extends DatedSeriesForecast {
  id: string;
}

/**
 * Forecasts many dated series with the same options, in input order. A series
 * that cannot be forecast makes the whole batch fail with its id in the message.
 */
export function forecastBatch(
  items: Iterable<BatchItem>,
  options: DatedForecastOptions,
  onProgress?: (done: number) => void,
): BatchResult[] {
  const results: BatchResult[] = [];
  for (const item of items) {
    try {
      results.push({ id: item.id, ...forecastDatedSeries(item.points, options) });
    } catch (error) {
      throw new RangeError(`series "${item.id}": ${(error as Error).message}`, { cause: error });
    }
    onProgress?.(results.length);
  }
  return results;
}
