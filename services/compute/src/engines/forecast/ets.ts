/**
 * Exponential smoothing state space models (ETS) as fitted by R's forecast::ets:
 * error A|M, trend N|A|Ad, season N|A|M; smoothing parameters and initial states
 * estimated jointly by maximum likelihood from the usual heuristic start, models
 * compared by AICc.
 */
import { nelderMead } from './optimize';
import { seasonalIndices } from './seasonality';

export type ErrorType = 'A' | 'M';
export type TrendType = 'N' | 'A' | 'Ad';
export type SeasonType = 'N' | 'A' | 'M';

export interface EtsSpec {
  error: ErrorType;
  trend: TrendType;
  season: SeasonType;
}

export interface EtsParameters {
  alpha: number;
  beta?: number;
  gamma?: number;
  phi?: number;
  /** Level before the first observation. */
  level: number;
  /** Slope before the first observation. */
  slope?: number;
  /** Seasonal states for positions 0..period-1 of the first cycle. */
  season?: readonly number[];
}

export interface EtsModel {
  spec: EtsSpec;
  period: number;
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  /** Final level, slope and seasonal states after the last observation. */
  level: number;
  slope: number;
  /** Seasonal state by absolute position modulo period. */
  season: number[];
  historyLength: number;
  /** -2 log-likelihood up to a constant, as R reports it. */
  likelihood: number;
  /** Estimated parameters including initial states and the error variance. */
  parameterCount: number;
  aicc: number;
}

const LOWER = 1e-4;
const UPPER = 0.9999;
const PHI_LOWER = 0.8;
const PHI_UPPER = 0.98;
const INVALID = Number.POSITIVE_INFINITY;
/** R's ets refuses seasonal models above this period (too many states to estimate). */
export const MAX_ETS_SEASON = 24;

export function etsName(spec: EtsSpec): string {
  return `ETS(${spec.error},${spec.trend},${spec.season})`;
}

function sigmoid(u: number): number {
  return 1 / (1 + Math.exp(-u));
}

function logit(p: number): number {
  const q = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(q / (1 - q));
}

function usesMultiplication(spec: EtsSpec): boolean {
  return spec.error === 'M' || spec.season === 'M';
}

/** Free initial states: level, slope when trended, period-1 seasonal states (the last one is implied). */
function stateCount(spec: EtsSpec, period: number): number {
  return 1 + (spec.trend === 'N' ? 0 : 1) + (spec.season === 'N' ? 0 : period - 1);
}

function smoothingCount(spec: EtsSpec): number {
  return 1 + (spec.trend === 'N' ? 0 : 1) + (spec.trend === 'Ad' ? 1 : 0) + (spec.season === 'N' ? 0 : 1);
}

/** R's data-sufficiency rule: a model needs more than its parameter count plus four observations. */
export function etsFits(spec: EtsSpec, length: number, period: number): boolean {
  if (spec.season !== 'N' && (period < 2 || period > MAX_ETS_SEASON || length < 2 * period)) return false;
  const rCount = 2 + (spec.trend === 'N' ? 0 : 2) + (spec.trend === 'Ad' ? 1 : 0) + (spec.season === 'N' ? 0 : period);
  return length > rCount + 4;
}

interface Recursion {
  likelihood: number;
  level: number;
  slope: number;
}

/**
 * One pass of the ETS filter over the data. `season` holds the initial seasonal
 * states on entry and the final ones on exit. Returns -2 log-likelihood (without
 * constants) or Infinity when the model produces an impossible forecast.
 */
function filter(
  y: Float64Array,
  spec: EtsSpec,
  period: number,
  alpha: number,
  beta: number,
  gamma: number,
  phi: number,
  level0: number,
  slope0: number,
  season: Float64Array,
): Recursion {
  const n = y.length;
  const trended = spec.trend !== 'N';
  const seasonType = spec.season;
  const multiplicativeError = spec.error === 'M';
  const checkPositive = usesMultiplication(spec);
  const betaRatio = trended ? beta / alpha : 0;
  let level = level0;
  let slope = trended ? slope0 : 0;
  let sse = 0;
  let logSum = 0;
  let position = 0;
  for (let t = 0; t < n; t++) {
    const damped = phi * slope;
    const base = level + damped;
    const s = seasonType === 'N' ? 0 : season[position];
    const expected = seasonType === 'M' ? base * s : base + s;
    const value = y[t];
    if (checkPositive) {
      if (!(expected > 1e-10) || (seasonType === 'M' && !(s > 1e-10))) {
        return { likelihood: INVALID, level, slope };
      }
    }
    const error = multiplicativeError ? (value - expected) / expected : value - expected;
    sse += error * error;
    if (multiplicativeError) logSum += Math.log(expected);
    const deseasonalised = seasonType === 'M' ? value / s : value - s;
    const newLevel = base + alpha * (deseasonalised - base);
    if (trended) slope = damped + betaRatio * (newLevel - level - damped);
    if (seasonType === 'M') season[position] = s + gamma * (value / base - s);
    else if (seasonType === 'A') season[position] = s + gamma * (value - base - s);
    level = newLevel;
    if (++position === period) position = 0;
  }
  const likelihood = n * Math.log(Math.max(sse, 1e-300)) + (multiplicativeError ? 2 * logSum : 0);
  return { likelihood: Number.isFinite(likelihood) ? likelihood : INVALID, level, slope };
}

interface InitialStates {
  level: number;
  slope: number;
  season: number[];
  /** Mean of the first adjusted points: a level start that is positive for positive data. */
  flatLevel: number;
}

/** Hyndman et al. (2008) start: decomposition of the first three years, regression on the first ten points. */
function initialStates(y: Float64Array, spec: EtsSpec, period: number): InitialStates {
  const n = y.length;
  let adjusted: number[] = Array.from(y);
  let season: number[] = [];
  if (spec.season !== 'N') {
    const window = Array.from(y.subarray(0, Math.min(n, 3 * period)));
    season = seasonalIndices(window, period, spec.season === 'M' ? 'multiplicative' : 'additive');
    adjusted = adjusted.map((v, t) => (spec.season === 'M' ? v / Math.max(season[t % period], 0.01) : v - season[t % period]));
  }
  const count = Math.min(Math.max(10, 2 * period), n);
  let sum = 0;
  for (let t = 0; t < count; t++) sum += adjusted[t];
  const flatLevel = sum / count;
  if (spec.trend === 'N') return { level: flatLevel, slope: 0, season, flatLevel };
  // Least squares of the first points on t = 1..count; the intercept is the level at t = 0.
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let t = 0; t < count; t++) {
    const x = t + 1;
    sx += x;
    sy += adjusted[t];
    sxx += x * x;
    sxy += x * adjusted[t];
  }
  const denominator = count * sxx - sx * sx;
  let slope = denominator !== 0 ? (count * sxy - sx * sy) / denominator : 0;
  let level = (sy - slope * sx) / count;
  if (Math.abs(level + slope) < 1e-8) {
    level *= 1 + 1e-3;
    slope *= 1 - 1e-3;
  }
  return { level, slope, season, flatLevel };
}

interface Decoded {
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  level: number;
  slope: number;
}

/** Maps unconstrained optimiser coordinates onto R's "usual" region: beta < alpha, gamma < 1 - alpha. */
function decode(x: readonly number[], spec: EtsSpec, period: number, season: Float64Array): Decoded {
  let i = 0;
  const alpha = LOWER + (UPPER - LOWER) * sigmoid(x[i++]);
  const beta = spec.trend === 'N' ? 0 : LOWER + (alpha - LOWER) * sigmoid(x[i++]);
  const gamma = spec.season === 'N' ? 0 : LOWER + Math.max(0, 1 - alpha - LOWER) * sigmoid(x[i++]);
  const phi = spec.trend === 'Ad' ? PHI_LOWER + (PHI_UPPER - PHI_LOWER) * sigmoid(x[i++]) : 1;
  const level = x[i++];
  const slope = spec.trend === 'N' ? 0 : x[i++];
  if (spec.season !== 'N') {
    let sum = 0;
    for (let j = 0; j < period - 1; j++) {
      season[j] = x[i++];
      sum += season[j];
    }
    season[period - 1] = (spec.season === 'M' ? period : 0) - sum;
  }
  return { alpha, beta, gamma, phi, level, slope };
}

function informationCriterion(likelihood: number, parameterCount: number, n: number): number {
  const aic = likelihood + 2 * parameterCount;
  const denominator = n - parameterCount - 1;
  return denominator > 0 ? aic + (2 * parameterCount * (parameterCount + 1)) / denominator : INVALID;
}

function meanAbsolute(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += Math.abs(v);
  const mean = values.length > 0 ? sum / values.length : 0;
  return mean > 0 ? mean : 1;
}

function toModel(
  spec: EtsSpec,
  period: number,
  decoded: Decoded,
  result: Recursion,
  season: Float64Array,
  n: number,
  scale: number,
): EtsModel {
  const parameterCount = smoothingCount(spec) + stateCount(spec, period) + 1;
  // Data are fitted in units of their mean; shift the likelihood back so it matches R's.
  const likelihood = result.likelihood + 2 * n * Math.log(scale);
  const seasonalScale = spec.season === 'A' ? scale : 1;
  return {
    spec,
    period: spec.season === 'N' ? 1 : period,
    alpha: decoded.alpha,
    beta: decoded.beta,
    gamma: decoded.gamma,
    phi: decoded.phi,
    level: result.level * scale,
    slope: result.slope * scale,
    season: spec.season === 'N' ? [] : Array.from(season, (s) => s * seasonalScale),
    historyLength: n,
    likelihood,
    parameterCount,
    aicc: informationCriterion(likelihood, parameterCount, n),
  };
}

export interface EtsFitOptions {
  maxEvaluations?: number;
  /** The simplex's budget per estimated parameter (smoothing parameters and initial states), when maxEvaluations is unset. */
  evaluationsPerParameter?: number;
}

/**
 * Additive-error non-seasonal models are linear in their initial states: every
 * one-step error is e0_t + l0 u_t + b0 v_t, where e0 is the error of a run started
 * at zero and u, v are the responses to a unit initial level and slope. For given
 * smoothing parameters the initial states that minimise the squared errors (the
 * maximum-likelihood ones) are then the solution of a 2 x 2 least-squares problem,
 * and the simplex only searches alpha, beta and phi. Returns -2 log-likelihood (no
 * constants) and the final states.
 */
function concentratedFilter(y: Float64Array, trended: boolean, alpha: number, beta: number, phi: number): Recursion {
  let l = 0;
  let b = 0;
  let ll = 1;
  let bl = 0;
  let lb = 0;
  let bb = 1;
  let suu = 0;
  let suv = 0;
  let svv = 0;
  let seu = 0;
  let sev = 0;
  let see = 0;
  for (let t = 0; t < y.length; t++) {
    const e = y[t] - l - phi * b;
    const u = -(ll + phi * bl);
    see += e * e;
    seu += e * u;
    suu += u * u;
    l += phi * b + alpha * e;
    ll += phi * bl + alpha * u;
    if (trended) {
      const v = -(lb + phi * bb);
      sev += e * v;
      suv += u * v;
      svv += v * v;
      b = phi * b + beta * e;
      bl = phi * bl + beta * u;
      lb += phi * bb + alpha * v;
      bb = phi * bb + beta * v;
    }
  }
  let level0 = 0;
  let slope0 = 0;
  if (trended) {
    // A whisker of ridge keeps the system solvable when the two responses are collinear.
    const ridge = 1e-10 * (suu + svv);
    const a11 = suu + ridge;
    const a22 = svv + ridge;
    const det = a11 * a22 - suv * suv;
    if (det > 0) {
      level0 = (-seu * a22 + sev * suv) / det;
      slope0 = (-sev * a11 + seu * suv) / det;
    }
  } else if (suu > 0) {
    level0 = -seu / suu;
  }
  const sse = see + 2 * level0 * seu + 2 * slope0 * sev + level0 * level0 * suu + 2 * level0 * slope0 * suv + slope0 * slope0 * svv;
  const likelihood = y.length * Math.log(Math.max(sse, 1e-300));
  return {
    likelihood: Number.isFinite(likelihood) ? likelihood : INVALID,
    level: l + level0 * ll + slope0 * lb,
    slope: trended ? b + level0 * bl + slope0 * bb : 0,
  };
}

/** Maximum likelihood of ETS(A,N,N), (A,A,N) and (A,Ad,N) with the initial states solved, not searched. */
function fitLinearEts(y: Float64Array, spec: EtsSpec, scale: number): EtsModel | null {
  const trended = spec.trend !== 'N';
  const damped = spec.trend === 'Ad';
  const decodeSmoothing = (x: readonly number[]) => {
    const alpha = LOWER + (UPPER - LOWER) * sigmoid(x[0]);
    const beta = trended ? LOWER + (alpha - LOWER) * sigmoid(x[1]) : 0;
    const phi = damped ? PHI_LOWER + (PHI_UPPER - PHI_LOWER) * sigmoid(x[2]) : 1;
    return { alpha, beta, phi };
  };
  const alpha0 = LOWER + 0.2 * (UPPER - LOWER);
  const beta0 = Math.min(LOWER + 0.1 * (UPPER - LOWER), alpha0 - 0.001);
  const x0 = [logit((alpha0 - LOWER) / (UPPER - LOWER))];
  if (trended) x0.push(logit((beta0 - LOWER) / (alpha0 - LOWER)));
  if (damped) x0.push(logit((0.978 - PHI_LOWER) / (PHI_UPPER - PHI_LOWER)));
  const best = nelderMead(
    (x) => {
      const d = decodeSmoothing(x);
      return concentratedFilter(y, trended, d.alpha, d.beta, d.phi).likelihood;
    },
    x0,
    { steps: x0.map(() => 1), maxEvaluations: 100 * x0.length + 100, tolerance: 1e-9 },
  );
  if (!Number.isFinite(best.value)) return null;
  const d = decodeSmoothing(best.x);
  const result = concentratedFilter(y, trended, d.alpha, d.beta, d.phi);
  if (!Number.isFinite(result.likelihood)) return null;
  const decoded: Decoded = { ...d, gamma: 0, level: 0, slope: 0 };
  return toModel(spec, 1, decoded, result, new Float64Array(1), y.length, scale);
}

/** Fits one ETS model by maximum likelihood; null when the data cannot support it. */
export function fitEts(values: readonly number[], spec: EtsSpec, period: number, options: EtsFitOptions = {}): EtsModel | null {
  const n = values.length;
  const m = spec.season === 'N' ? 1 : period;
  if (!etsFits(spec, n, period)) return null;
  if (usesMultiplication(spec) && values.some((v) => !(v > 0))) return null;
  const scale = meanAbsolute(values);
  const y = Float64Array.from(values, (v) => v / scale);
  if (spec.error === 'A' && spec.season === 'N') return fitLinearEts(y, spec, scale);
  const start = initialStates(y, spec, m);
  const season = new Float64Array(m);

  const alpha0 = LOWER + (0.2 * (UPPER - LOWER)) / m;
  const beta0 = Math.min(LOWER + 0.1 * (UPPER - LOWER), alpha0 - 0.001);
  const gamma0 = Math.min(LOWER + 0.05 * (UPPER - LOWER), 1 - alpha0 - 0.001);
  const x0: number[] = [logit((alpha0 - LOWER) / (UPPER - LOWER))];
  const steps: number[] = [0.5];
  if (spec.trend !== 'N') {
    x0.push(logit((beta0 - LOWER) / (alpha0 - LOWER)));
    steps.push(0.5);
  }
  if (spec.season !== 'N') {
    x0.push(logit((gamma0 - LOWER) / (1 - alpha0 - LOWER)));
    steps.push(0.5);
  }
  if (spec.trend === 'Ad') {
    x0.push(logit((0.978 - PHI_LOWER) / (PHI_UPPER - PHI_LOWER)));
    steps.push(1);
  }
  x0.push(start.level);
  steps.push(0.1 * Math.max(Math.abs(start.level), 0.1));
  if (spec.trend !== 'N') {
    x0.push(start.slope);
    steps.push(0.1 * Math.max(Math.abs(start.slope), 0.01));
  }
  if (spec.season !== 'N') {
    for (let j = 0; j < m - 1; j++) {
      x0.push(start.season[j]);
      steps.push(spec.season === 'M' ? 0.05 : 0.05 * Math.max(Math.abs(start.season[j]), 0.1));
    }
  }

  const objective = (x: readonly number[]): number => {
    const d = decode(x, spec, m, season);
    return filter(y, spec, m, d.alpha, d.beta, d.gamma, d.phi, d.level, d.slope, season).likelihood;
  };
  const dims = x0.length;
  // A steep heuristic slope can make a multiplicative model invalid from the start, leaving the simplex stuck.
  if (!Number.isFinite(objective(x0)) && spec.trend !== 'N') {
    x0[1] = logit(0.01);
    x0[smoothingCount(spec)] = start.flatLevel;
    x0[smoothingCount(spec) + 1] = 0;
    if (!Number.isFinite(objective(x0))) x0[0] = logit((0.5 - LOWER) / (UPPER - LOWER));
  }
  const best = nelderMead(objective, x0, {
    steps,
    maxEvaluations:
      options.maxEvaluations ??
      (options.evaluationsPerParameter !== undefined ? options.evaluationsPerParameter * dims : Math.min(3000, 150 * dims + 300)),
  });
  if (!Number.isFinite(best.value)) return null;
  const decoded = decode(best.x, spec, m, season);
  const result = filter(y, spec, m, decoded.alpha, decoded.beta, decoded.gamma, decoded.phi, decoded.level, decoded.slope, season);
  if (!Number.isFinite(result.likelihood)) return null;
  return toModel(spec, m, decoded, result, season, n, scale);
}

/** Runs a model with given parameters and initial states (no estimation); the basis of hand-checkable tests. */
export function applyEts(values: readonly number[], spec: EtsSpec, period: number, parameters: EtsParameters): EtsModel {
  const m = spec.season === 'N' ? 1 : period;
  const season = new Float64Array(m);
  if (spec.season !== 'N') {
    for (let j = 0; j < m; j++) season[j] = parameters.season?.[j] ?? (spec.season === 'M' ? 1 : 0);
  }
  const decoded: Decoded = {
    alpha: parameters.alpha,
    beta: spec.trend === 'N' ? 0 : (parameters.beta ?? 0),
    gamma: spec.season === 'N' ? 0 : (parameters.gamma ?? 0),
    phi: spec.trend === 'Ad' ? (parameters.phi ?? 1) : 1,
    level: parameters.level,
    slope: spec.trend === 'N' ? 0 : (parameters.slope ?? 0),
  };
  const y = Float64Array.from(values);
  const result = filter(y, spec, m, decoded.alpha, decoded.beta, decoded.gamma, decoded.phi, decoded.level, decoded.slope, season);
  return toModel(spec, m, decoded, result, season, values.length, 1);
}

/** Point forecasts: the forecast function of the fitted state (as R's forecast.ets without simulation). */
export function forecastEts(model: EtsModel, horizon: number): number[] {
  const out = new Array<number>(horizon);
  const { spec, period, phi, level, slope, season, historyLength } = model;
  let trendMultiplier = 0;
  let power = 1;
  for (let i = 1; i <= horizon; i++) {
    if (spec.trend === 'A') trendMultiplier = i;
    else if (spec.trend === 'Ad') {
      power *= phi;
      trendMultiplier += power;
    }
    const base = level + trendMultiplier * slope;
    if (spec.season === 'N') out[i - 1] = base;
    else {
      const s = season[(historyLength + i - 1) % period];
      out[i - 1] = spec.season === 'M' ? base * s : base + s;
    }
  }
  return out;
}

/**
 * The candidate set of R's ets with restrict = TRUE and no multiplicative trend:
 * additive error never meets multiplicative season, multiplicative parts need
 * positive data, seasonal parts need a seasonal period.
 */
export function etsCandidates(values: readonly number[], period: number, seasonal: boolean): EtsSpec[] {
  const positive = values.length > 0 && values.every((v) => v > 0);
  const errors: ErrorType[] = positive ? ['A', 'M'] : ['A'];
  const trends: TrendType[] = ['N', 'A', 'Ad'];
  const seasons: SeasonType[] = ['N'];
  if (seasonal && period > 1) seasons.push('A', ...(positive ? (['M'] as SeasonType[]) : []));
  const specs: EtsSpec[] = [];
  for (const error of errors) {
    for (const trend of trends) {
      for (const season of seasons) {
        if (error === 'A' && season === 'M') continue;
        const spec = { error, trend, season };
        if (etsFits(spec, values.length, period)) specs.push(spec);
      }
    }
  }
  return specs;
}

/** Fits every candidate and keeps the smallest AICc (ties broken by candidate order). */
export function selectEts(
  values: readonly number[],
  period: number,
  candidates: readonly EtsSpec[],
  options: EtsFitOptions = {},
): EtsModel | null {
  let best: EtsModel | null = null;
  for (const spec of candidates) {
    const model = fitEts(values, spec, period, options);
    if (model && Number.isFinite(model.aicc) && (!best || model.aicc < best.aicc)) best = model;
  }
  return best;
}
