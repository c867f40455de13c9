/**
 * Automatic method choice: candidates suited to the demand class are compared
 * on a rolling-origin holdout (several forecast origins near the end of the
 * history, each refitted on the data before it).
 */
import { meanAbsoluteError, meanSquaredError } from './accuracy';
import { type Method, type ModelForecast, combination, prepareHistory, runMethod } from './methods';
import { isSeasonal } from './seasonality';

/**
 * Candidates for smooth and erratic demand; `combination` first as the default.
 * `damped` and `optimized_theta` alone are left out: they are in the combination,
 * almost never halve its error, and are the costliest fits.
 */
export const CONTINUOUS_CANDIDATES: readonly Method[] = [
  'combination',
  'ses',
  'holt',
  'theta',
  'arima',
  'naive2',
  'seasonal_naive',
];

/** Candidates for intermittent and lumpy demand; SBA first as the default. */
export const INTERMITTENT_CANDIDATES: readonly Method[] = ['sba', 'croston', 'tsb', 'adida'];

/**
 * A single model replaces the combination only when it halves the combination's
 * holdout error: holdout winners are noisy, equal-weight combinations are not
 * (on M3 monthly, plain arg-min selection loses about 0.5 sMAPE points).
 */
export const COMBINATION_ADVANTAGE = 0.5;

const ORIGINS = 3;
const MIN_TRAINING = 4;

export interface HoldoutPlan {
  /** Training lengths, i.e. forecast origins, latest first. */
  cuts: number[];
  /** Points forecast from each origin. */
  window: number;
}

/**
 * Up to three origins spread over the last holdout window, which is as long as
 * the horizon but at most a quarter of the history. Null when too short.
 */
export function holdoutPlan(length: number, horizon: number): HoldoutPlan | null {
  const window = Math.min(Math.max(1, horizon), Math.floor(length / 4));
  if (window < 1) return null;
  const cuts: number[] = [];
  for (let o = 0; o < ORIGINS; o++) {
    const cut = length - window - Math.round((o * window) / ORIGINS);
    if (cut >= MIN_TRAINING && !cuts.includes(cut)) cuts.push(cut);
  }
  return cuts.length > 0 ? { cuts, window } : null;
}

/** Forecasts of several methods on one history, computing combination members only once. */
export function runMethods(
  values: readonly number[],
  period: number,
  methods: readonly Method[],
  horizon: number,
  seasonal?: boolean,
): Map<Method, ModelForecast> {
  const history = prepareHistory(values, period, seasonal);
  const results = new Map<Method, ModelForecast>();
  const get = (method: Method): ModelForecast => {
    let result = results.get(method);
    if (!result) {
      result =
        method === 'combination' ? combination(history, horizon, get) : runMethod(method, history, horizon);
      results.set(method, result);
    }
    return result;
  };
  for (const method of methods) get(method);
  return results;
}

export interface HoldoutScore {
  /** Mean absolute error averaged over origins. */
  mae: number;
  mse: number;
  /** Mean of forecast - actual averaged over origins. */
  bias: number;
  /** Actual - forecast per origin (in the order of the plan's cuts), for intervals. */
  errors: number[][];
}

/**
 * Rolling-origin errors of each method; every origin refits on the data before it.
 * The seasonality verdict of the whole history is kept at every origin, so methods
 * are compared as they will run (shorter windows would fail the test more often).
 */
export function holdoutScores(
  values: readonly number[],
  period: number,
  methods: readonly Method[],
  plan: HoldoutPlan,
): Map<Method, HoldoutScore> {
  const scores = new Map<Method, HoldoutScore>(methods.map((m) => [m, { mae: 0, mse: 0, bias: 0, errors: [] }]));
  const seasonal = isSeasonal(values, period);
  for (const cut of plan.cuts) {
    const actual = values.slice(cut, cut + plan.window);
    const forecasts = runMethods(values.slice(0, cut), period, methods, actual.length, seasonal);
    for (const method of methods) {
      const forecast = forecasts.get(method)?.forecast ?? [];
      const score = scores.get(method) as HoldoutScore;
      score.mae += meanAbsoluteError(actual, forecast) / plan.cuts.length;
      score.mse += meanSquaredError(actual, forecast) / plan.cuts.length;
      const errors = actual.map((a, j) => a - (forecast[j] ?? Number.NaN));
      score.bias -= errors.reduce((sum, e) => sum + e, 0) / Math.max(1, errors.length) / plan.cuts.length;
      score.errors.push(errors);
    }
  }
  return scores;
}

export interface Selection {
  method: Method;
  holdoutError: number | null;
  /** Holdout score of the chosen method; null when the history is too short. */
  score: HoldoutScore | null;
  plan: HoldoutPlan | null;
}

/**
 * Picks among candidates by holdout error: mean squared error for intermittent
 * demand (absolute error would reward forecasting zero), absolute error
 * otherwise with the combination rule above. The first candidate is the
 * default when the history is too short to hold any out.
 */
export function selectMethod(
  values: readonly number[],
  period: number,
  horizon: number,
  candidates: readonly Method[],
  intermittent: boolean,
): Selection {
  const plan = holdoutPlan(values.length, horizon);
  if (!plan) return { method: candidates[0], holdoutError: null, score: null, plan: null };
  const scores = holdoutScores(values, period, candidates, plan);
  const criterion = (m: Method) => {
    const score = scores.get(m) as HoldoutScore;
    return intermittent ? score.mse : score.mae;
  };
  let best = candidates[0];
  for (const method of candidates) if (criterion(method) < criterion(best)) best = method;
  if (!intermittent && candidates.includes('combination') && best !== 'combination') {
    if (!(criterion(best) < COMBINATION_ADVANTAGE * criterion('combination'))) best = 'combination';
  }
  const score = scores.get(best) as HoldoutScore;
  return { method: best, holdoutError: score.mae, score, plan };
}

/** Holdout of one given method; null score when the history is too short. */
export function methodHoldout(values: readonly number[], period: number, horizon: number, method: Method): Selection {
  const plan = holdoutPlan(values.length, horizon);
  if (!plan) return { method, holdoutError: null, score: null, plan: null };
  const score = holdoutScores(values, period, [method], plan).get(method) as HoldoutScore;
  return { method, holdoutError: score.mae, score, plan };
}

/** Holdout error (MAE) of one given method; null when the history is too short. */
export function methodHoldoutError(values: readonly number[], period: number, horizon: number, method: Method): number | null {
  return methodHoldout(values, period, horizon, method).holdoutError;
}
