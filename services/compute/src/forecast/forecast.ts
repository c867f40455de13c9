/**
 * Forecasting entry points: one series of values, one dated series, or a batch.
 */
import { CONTINUOUS_CANDIDATES, INTERMITTENT_CANDIDATES, methodHoldoutError, runMethods, selectMethod } from './auto';
import { type Frequency, SEASONAL_PERIODS, futureDates } from './calendar';
import { type SeriesClass, classifySeries, isIntermittentClass } from './classify';
import { type Algorithm, type Method, isAlgorithm } from './methods';
import { naive } from './naive';
import {
  type Constraint,
  type DatedValue,
  type MissingImputation,
  applyConstraint,
  imputeMissing,
  isConstraint,
  isMissingImputation,
  toPeriodSeries,
} from './prepare';

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

export interface SeriesForecast {
  forecast: number[];
  /** Method that produced the forecast (see `ModelForecast.model`). */
  model: string;
  /** Mean absolute error of that method on the rolling-origin holdout; null when not measured. */
  holdoutError: number | null;
  seriesClass: SeriesClass;
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

/**
 * Forecasts one series of equally spaced values (oldest first). Deterministic;
 * never returns NaN or Infinity: a method that fails numerically is replaced by
 * the naive forecast.
 */
export function forecastSeries(values: readonly number[], options: ForecastOptions): SeriesForecast {
  assertOptions(options);
  values.forEach((v, t) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new RangeError(`value ${t} is not a finite number: ${v}`);
  });
  const { horizon, period } = options;
  const algorithm = options.algorithm ?? 'auto';
  const constraint = options.constraint ?? 'auto';
  const { seriesClass } = classifySeries(values);

  const evaluate = algorithm === 'auto' || (options.evaluate ?? true);
  let method: Method;
  let holdoutError: number | null = null;
  if (values.length <= 1 || isConstant(values)) {
    // Nothing to learn beyond the level; every method would reproduce it.
    method = 'naive';
    if (evaluate) holdoutError = methodHoldoutError(values, period, horizon, method);
  } else if (algorithm === 'auto') {
    const intermittent = isIntermittentClass(seriesClass);
    const selection = selectMethod(
      values,
      period,
      horizon,
      intermittent ? INTERMITTENT_CANDIDATES : CONTINUOUS_CANDIDATES,
      intermittent,
    );
    method = selection.method;
    holdoutError = selection.holdoutError;
  } else {
    method = algorithm;
    if (evaluate) holdoutError = methodHoldoutError(values, period, horizon, method);
  }

  let result = runMethods(values, period, [method], horizon).get(method) ?? { forecast: [], model: method };
  if (result.forecast.length !== horizon || !result.forecast.every(Number.isFinite)) {
    result = { forecast: naive(values, horizon), model: 'naive' };
  }
  if (holdoutError !== null && !Number.isFinite(holdoutError)) holdoutError = null;
  return {
    forecast: applyConstraint(result.forecast, constraint, values),
    model: result.model,
    holdoutError,
    seriesClass,
  };
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
      throw new RangeError(`series "${item.id}": ${(error as Error).message}`);
    }
    onProgress?.(results.length);
  }
  return results;
}
