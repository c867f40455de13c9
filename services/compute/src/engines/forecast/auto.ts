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
 * `damped` and `optimized_theta` alone are left out: they are in the combination
 * and are the costliest fits.
 */
export const CONTINUOUS_CANDIDATES: readonly Method[] = ['combination', 'ses', 'holt', 'theta', 'arima', 'naive2', 'seasonal_naive'];

/** Candidates for intermittent and lumpy demand; SBA first as the default. */
export const INTERMITTENT_CANDIDATES: readonly Method[] = ['sba', 'croston', 'tsb', 'adida'];

/**
 * A single model replaces the combination only when its holdout error is under
 * this fraction of the combination's: a model that all but reproduces the holdout
 * (a straight line, a repeating pattern). Holdout winners are noisy and the
 * combination's weights already lean towards the members that forecast the
 * holdout well.
 */
export const COMBINATION_ADVANTAGE = 0.25;

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

/**
 * Forecasts of several methods on one history, computing shared members only once;
 * `weights` are the combination's member weights (equal when absent).
 */
export function runMethods(
  values: readonly number[],
  period: number,
  methods: readonly Method[],
  horizon: number,
  seasonal?: boolean,
  weights?: readonly number[],
): Map<Method, ModelForecast> {
  const history = prepareHistory(values, period, seasonal);
  const results = new Map<Method, ModelForecast>();
  const get = (method: Method): ModelForecast => {
    let result = results.get(method);
    if (!result) {
      result = method === 'combination' ? combination(history, horizon, get, weights) : runMethod(method, history, horizon);
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
  /** For `combination`: each member's mean absolute error averaged over origins. */
  memberMae?: number[];
}

/**
 * Member weights of the combination from its members' rolling-origin errors:
 * proportional to 1 / MAE (a member that forecast the holdout twice as well counts
 * twice). Null (equal weights) without usable errors.
 */
export function combinationWeights(memberMae: readonly number[] | undefined): number[] | null {
  if (!memberMae || memberMae.length === 0 || !memberMae.every((e) => Number.isFinite(e) && e >= 0)) return null;
  const average = memberMae.reduce((a, b) => a + b, 0) / memberMae.length;
  if (!(average > 0)) return null;
  return memberMae.map((e) => 1 / Math.max(e, 1e-6 * average));
}

/**
 * Forecast pooling (Kourentzes, Barrow & Petropoulos 2019): the members sorted by holdout error,
 * the largest step between neighbours splits them, and when that step is at least this factor the
 * members before it form the pool and the others are left out. A season whose amplitude grows
 * (the members on the shared, fixed decomposition miss it; the airline model does not) or an
 * autoregressive cycle (only the automatic ARIMA follows it) opens such a gap; on most series the
 * members' errors are close and all of them are averaged.
 */
export const POOL_GAP = 2;

/**
 * `weights` with the members outside the pool set to 0 (see POOL_GAP); unchanged when no step
 * between sorted holdout errors reaches the gap.
 */
export function pooledWeights(memberMae: readonly number[], weights: readonly number[]): number[] {
  const order = memberMae.map((_, k) => k).sort((a, b) => memberMae[a] - memberMae[b] || a - b);
  let widest = 0;
  let cut = -1;
  for (let k = 0; k + 1 < order.length; k++) {
    const lower = memberMae[order[k]];
    const ratio = lower > 0 ? memberMae[order[k + 1]] / lower : 0;
    if (ratio > widest) {
      widest = ratio;
      cut = k;
    }
  }
  if (!(widest >= POOL_GAP)) return weights.slice();
  const pool = new Set(order.slice(0, cut + 1));
  return weights.map((w, k) => (pool.has(k) ? w : 0));
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
      const result = forecasts.get(method);
      const forecast = result?.forecast ?? [];
      const score = scores.get(method) as HoldoutScore;
      if (result?.members) {
        const memberMae = score.memberMae ?? new Array<number>(result.members.length).fill(0);
        result.members.forEach((m, k) => (memberMae[k] += meanAbsoluteError(actual, m) / plan.cuts.length));
        score.memberMae = memberMae;
      }
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
  /** Member weights when the method is `combination` and its members were scored. */
  weights?: number[];
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
  return { method: best, holdoutError: score.mae, score, plan, weights: memberWeights(score) };
}

/** The combination's member weights from a holdout: inverse errors, pooled; undefined (equal) without member errors. */
function memberWeights(score: HoldoutScore): number[] | undefined {
  const weights = combinationWeights(score.memberMae);
  return weights && score.memberMae ? pooledWeights(score.memberMae, weights) : undefined;
}

/** Holdout of one given method; null score when the history is too short. */
export function methodHoldout(values: readonly number[], period: number, horizon: number, method: Method): Selection {
  const plan = holdoutPlan(values.length, horizon);
  if (!plan) return { method, holdoutError: null, score: null, plan: null };
  const score = holdoutScores(values, period, [method], plan).get(method) as HoldoutScore;
  return { method, holdoutError: score.mae, score, plan, weights: memberWeights(score) };
}

/** Holdout error (MAE) of one given method; null when the history is too short. */
export function methodHoldoutError(values: readonly number[], period: number, horizon: number, method: Method): number | null {
  return methodHoldout(values, period, horizon, method).holdoutError;
}
