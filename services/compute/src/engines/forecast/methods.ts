/**
 * Every forecasting method addressable by name. Non-seasonal methods (SES, Holt,
 * damped, Theta, Naive2) run on the seasonally adjusted series when the
 * seasonality test finds a season, as in the M competitions.
 */
import { KPSS_CRITICAL, airline, airlineFits, arima011Drift, autoArima, kpssStatistic } from './arima';
import { type EtsModel, type EtsSpec, MAX_ETS_SEASON, etsCandidates, etsFits, fitEts, forecastEts, selectEts } from './ets';
import { classifySeries } from './classify';
import { adida, croston, sba, tsb } from './intermittent';
import { naive, seasonalNaive } from './naive';
import { type SeasonalAdjustment, isSeasonal, reseasonalize, seasonallyAdjust, shrinkSeasonalIndices } from './seasonality';
import { fitSimpleSmoothing } from './ses';
import { medianOfSorted } from './statistics';
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
  'arima',
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

/**
 * Members of `combination`: damped trend, Theta, optimised Theta, the airline model
 * (`arima`), and two ARIMA models of the seasonally adjusted series: one chosen
 * like R's auto.arima (differencing by KPSS, p, q <= 2 by AICc) and ARIMA(0,1,1)
 * with drift. The ARIMA members model the season by differencing or extrapolate
 * differences rather than smooth levels, which makes their errors the least
 * correlated with the smoothing members'.
 */
export const COMBINATION_MEMBERS = ['damped', 'theta', 'optimized_theta', 'arima', 'arima_auto', 'arima_drift'] as const;
export type CombinationMember = (typeof COMBINATION_MEMBERS)[number];

/**
 * A season this short (quarterly, half-yearly data) also brings Holt-Winters into the
 * combination, as a seventh member after COMBINATION_MEMBERS: the one member whose seasonal
 * states evolve with the data (the others share one fixed decomposition; the airline model
 * differences the season away). With three seasonal states it is well estimated and cheap;
 * with the 7 or 12 of daily and monthly data it made the combination worse, so it is not added there.
 */
export const SHORT_SEASON_MAX = 4;

/** The Holt-Winters member's simplex budget per parameter, about half a full fit's: quarterly runs keep about 100 series per CPU-second. */
const SHORT_SEASON_EVALUATIONS = 80;

/** Holt-Winters with multiplicative season (positive data) or additive, linear or damped trend by AICc; null when too short. */
function seasonalStateMember(history: PreparedHistory, horizon: number): number[] | null {
  const { values, period } = history;
  const positive = values.length > 0 && values.every((v) => v > 0);
  const season = positive ? 'M' : 'A';
  const specs: EtsSpec[] = [
    { error: season, trend: 'A', season },
    { error: season, trend: 'Ad', season },
  ];
  const model = selectEts(values, period, specs, { evaluationsPerParameter: SHORT_SEASON_EVALUATIONS });
  const forecast = model ? forecastEts(model, horizon) : null;
  return forecast && forecast.every(Number.isFinite) ? forecast : null;
}

/** Named fitted parameters of a model, e.g. `{ alpha: 0.31, phi: 0.94, season_period: 12 }`. */
export type ModelParameters = Record<string, number>;

export interface ModelForecast {
  forecast: number[];
  /** For `combination`: each member's forecast, in the order of COMBINATION_MEMBERS, then Holt-Winters on a short season (SHORT_SEASON_MAX). */
  members?: number[][];
  /** What actually produced the forecast, e.g. `theta`, `ets(M,Ad,M)`, or a fallback such as `ses`. */
  model: string;
  parameters?: ModelParameters;
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

/** Season length removed by decomposition before a non-seasonal method ran (1 = none). */
function seasonParameter(history: PreparedHistory): ModelParameters {
  return { season_period: history.adjustment.seasonal ? history.adjustment.period : 1 };
}

function etsParameters(model: EtsModel): ModelParameters {
  const parameters: ModelParameters = { alpha: model.alpha };
  if (model.spec.trend !== 'N') parameters.beta = model.beta;
  if (model.spec.trend === 'Ad') parameters.phi = model.phi;
  if (model.spec.season !== 'N') parameters.gamma = model.gamma;
  return parameters;
}

function smoothingOnAdjusted(history: PreparedHistory, horizon: number): ModelForecast {
  const fit = fitSimpleSmoothing(history.adjustment.adjusted);
  return {
    forecast: onAdjusted(history, new Array<number>(horizon).fill(fit.level)),
    model: 'ses',
    parameters: { alpha: fit.alpha, ...seasonParameter(history) },
  };
}

function trendOnAdjusted(history: PreparedHistory, horizon: number, damped: boolean, name: string): ModelForecast {
  const spec: EtsSpec = { error: 'A', trend: damped ? 'Ad' : 'A', season: 'N' };
  const model = fitEts(history.adjustment.adjusted, spec, 1);
  if (!model) return smoothingOnAdjusted(history, horizon);
  return {
    forecast: onAdjusted(history, forecastEts(model, horizon)),
    model: name,
    parameters: { ...etsParameters(model), ...seasonParameter(history) },
  };
}

/**
 * History from which the combination's damped-trend member may choose no trend at all: with
 * three years of monthly data AICc tells a level from a damped trend; on shorter histories
 * (most yearly and quarterly series) it took the trend away from series that had one.
 */
export const LEVEL_OR_TREND_MIN_LENGTH = 36;

const LEVEL_OR_DAMPED: readonly EtsSpec[] = [
  { error: 'A', trend: 'N', season: 'N' },
  { error: 'A', trend: 'Ad', season: 'N' },
];

/**
 * Simple exponential smoothing or the damped trend, whichever has the smaller AICc (as R's
 * ets chooses), on the adjusted series: a level plus noise no longer gets a trend extrapolated
 * from the noise.
 */
function levelOrDampedTrend(history: PreparedHistory, horizon: number): number[] {
  const adjusted = history.adjustment.adjusted;
  const model = selectEts(
    adjusted,
    1,
    LEVEL_OR_DAMPED.filter((spec) => etsFits(spec, adjusted.length, 1)),
  );
  if (!model) return trendOnAdjusted(history, horizon, true, 'damped').forecast;
  return onAdjusted(history, forecastEts(model, horizon));
}

/** ETS model selection by AICc; periods beyond ETS's reach are handled by decomposition. */
function automaticEts(history: PreparedHistory, horizon: number): ModelForecast {
  const { values, period, adjustment } = history;
  const direct = period <= MAX_ETS_SEASON || !adjustment.seasonal;
  const data = direct ? values : adjustment.adjusted;
  const model = selectEts(data, direct ? period : 1, etsCandidates(data, period, direct && adjustment.seasonal));
  if (!model) return smoothingOnAdjusted(history, horizon);
  const forecast = forecastEts(model, horizon);
  if (direct) return { forecast, model: etsLabel(model), parameters: etsParameters(model) };
  return {
    forecast: onAdjusted(history, forecast),
    model: `${etsLabel(model)}+decomposition`,
    parameters: { ...etsParameters(model), ...seasonParameter(history) },
  };
}

/**
 * Whether a seasonal model (the airline model, seasonal naive) may forecast this history. A season
 * of at most SHORT_SEASON_MAX periods always may: the seasonality test has few lags to go on there
 * and misses real seasons (without the airline model M3 as quarterly totals lost 0.005 MASE). So
 * may a history shorter than three seasons, where the test can rule little out and the holdout
 * decides (two years of a repeating pattern are still forecast as they repeat). Otherwise the season
 * must show in the tests (seasonalForMembers): a seasonal model on a history without one replays
 * last year's accidents, and one data-entry spike of 10,000 in 51 months of about 10 came back a
 * year later as a forecast of 10,000 (seasonal naive) and 7.6 million (the airline model).
 */
export function seasonalModelsApply(values: readonly number[], period: number, history?: PreparedHistory): boolean {
  if (period <= SHORT_SEASON_MAX || values.length < 3 * period) return true;
  return seasonalForMembers(history ?? prepareHistory(values, period)).adjustment.seasonal;
}

/** Airline model on the raw series when there are three seasons and seasonalModelsApply, else ARIMA(0,1,1) with drift, else naive. */
function arimaFamily(history: PreparedHistory, horizon: number): ModelForecast {
  const { values, period } = history;
  const seasonal =
    airlineFits(values.length, period) && seasonalModelsApply(values, period, history) ? airline(values, period, horizon) : null;
  if (seasonal && seasonal.forecast.every(Number.isFinite)) {
    return {
      forecast: seasonal.forecast,
      model: 'arima',
      parameters: {
        ma1: seasonal.fit.theta,
        seasonal_ma1: seasonal.fit.seasonalTheta,
        season_period: period,
        log: seasonal.fit.logScale ? 1 : 0,
      },
    };
  }
  const plain = arima011Drift(values, horizon);
  if (plain && plain.forecast.every(Number.isFinite))
    return { forecast: plain.forecast, model: 'arima', parameters: { ma1: plain.theta, drift: plain.drift } };
  return { forecast: naive(values, horizon), model: 'naive' };
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
  if (model) return { forecast: forecastEts(model, horizon), model: etsLabel(model), parameters: etsParameters(model) };
  // Too short or non-positive for the requested form: fall back step by step.
  if (multiplicative && positive) return holtWinters(history, horizon, false);
  return trendOnAdjusted(history, horizon, true, 'damped');
}

/**
 * The log of a positive seasonally adjusted series as a history of its own, on which
 * additive trends become relative ones (growth by a percentage, not by units).
 */
function logAdjusted(history: PreparedHistory): PreparedHistory | null {
  const adjusted = history.adjustment.adjusted;
  if (adjusted.length === 0 || !adjusted.every((v) => v > 0)) return null;
  // exp of a log-scale forecast is a median: close to the mean for smooth demand, well below it for erratic.
  if (classifySeries(adjusted).seriesClass !== 'smooth') return null;
  const logs = adjusted.map(Math.log);
  return {
    values: logs,
    period: 1,
    adjustment: { adjusted: logs, indices: [0], kind: 'additive', seasonal: false, period: 1 },
  };
}

/** Members fitted on the log scale when the adjusted series is positive. */
const LOG_SCALE_MEMBERS: ReadonlySet<CombinationMember> = new Set<CombinationMember>(['damped', 'theta', 'optimized_theta']);

/**
 * The autocorrelation test at the seasonal lag is swamped by a trend (every lag
 * correlates), so a trending seasonal series can fail it; the members also
 * decompose the series when its first differences pass the test.
 */
export function seasonalForMembers(history: PreparedHistory): PreparedHistory {
  const { values, period, adjustment } = history;
  if (adjustment.seasonal || values.length < 2 * period + 1) return history;
  const changes = values.slice(1).map((v, t) => v - values[t]);
  return isSeasonal(changes, period) ? prepareHistory(values, period, true) : history;
}

/**
 * The history with its seasonal indices shrunk towards no season (see
 * shrinkSeasonalIndices), the decomposition the combination's members share.
 */
export function shrunkHistory(history: PreparedHistory): PreparedHistory {
  const { values, period, adjustment } = history;
  if (!adjustment.seasonal) return history;
  const indices = shrinkSeasonalIndices(values, period, adjustment.kind, adjustment.indices);
  const multiplicative = adjustment.kind === 'multiplicative';
  const adjusted = values.map((v, t) => (multiplicative ? v / indices[t % period] : v - indices[t % period]));
  return { values, period, adjustment: { ...adjustment, indices, adjusted } };
}

function adjustedArima(history: PreparedHistory, horizon: number, automatic: boolean): number[] {
  const adjusted = history.adjustment.adjusted;
  const fit = automatic ? autoArima(adjusted, horizon) : arima011Drift(adjusted, horizon);
  const forecast = fit?.forecast ?? naive(adjusted, horizon);
  return onAdjusted(history, forecast.every(Number.isFinite) ? forecast : naive(adjusted, horizon));
}

/**
 * Weighted mean of the members (equal weights unless given, e.g. from their
 * rolling-origin errors), trimmed of each step's highest and lowest member. The members
 * share one decomposition whose seasonal indices are shrunk (James-Stein); the trend
 * members run on the log of the adjusted series when it is positive (on M3 monthly this
 * alone takes Theta from sMAPE 13.9 to 13.5). `raw` gives the airline member on the
 * history as is (so a caller can share its runs).
 */
export function combination(
  history: PreparedHistory,
  horizon: number,
  raw: (member: Method) => ModelForecast,
  weights?: readonly number[],
): ModelForecast {
  const shrunk = shrunkHistory(seasonalForMembers(history));
  const logged = logAdjusted(shrunk);
  const members = COMBINATION_MEMBERS.map((member): number[] => {
    if (member === 'arima') return raw('arima').forecast;
    if (member === 'arima_auto' || member === 'arima_drift') return adjustedArima(shrunk, horizon, member === 'arima_auto');
    const run = (on: PreparedHistory): number[] => {
      if (member === 'damped' && history.values.length >= LEVEL_OR_TREND_MIN_LENGTH) return levelOrDampedTrend(on, horizon);
      // The Theta members extrapolate only as much of the trend as the history tells from noise (slopeShrinkage).
      if (member === 'theta') return onAdjusted(on, thetaOnAdjusted(on.adjustment.adjusted, horizon, true));
      if (member === 'optimized_theta') return onAdjusted(on, optimizedThetaOnAdjusted(on.adjustment.adjusted, horizon, true));
      return runMethod(member, on, horizon).forecast;
    };
    if (logged && LOG_SCALE_MEMBERS.has(member)) {
      const onLog = run(logged).map(Math.exp);
      if (onLog.every(Number.isFinite)) return onAdjusted(shrunk, onLog);
    }
    return run(shrunk);
  });
  if (history.period >= 2 && history.period <= SHORT_SEASON_MAX) {
    // Too short for the model: the combination's damped trend stands in, so every origin has seven members.
    members.push(seasonalStateMember(history, horizon) ?? members[0]);
  }
  const usable =
    weights && weights.length === members.length && weights.every((w) => w >= 0 && Number.isFinite(w)) && weights.some((w) => w > 0);
  const memberWeights = usable ? weights : members.map(() => 1);
  // A weight of 0 leaves a member out (pooling, see auto.ts): the pool's weighted mean, untrimmed.
  const pooled = usable && weights.some((w) => w === 0);
  // The holdout's pool is evidence for its members; elsewhere a runaway member is reined in.
  if (!pooled) reinDivergentMembers(members, history.values);
  // On a level-stationary history only the members that extrapolate no drift are averaged, untrimmed.
  const kept =
    !pooled && levelStationary(shrunk) ? COMBINATION_MEMBERS.flatMap((member, k) => (keptOnLevel(member, shrunk) ? [k] : [])) : null;
  let forecast: number[];
  if (pooled) {
    forecast = weightedMean(members, memberWeights);
  } else if (kept) {
    const keptWeights = kept.map((k) => memberWeights[k]);
    const weighted = keptWeights.some((w) => w > 0);
    forecast = weightedMean(
      kept.map((k) => members[k]),
      weighted ? keptWeights : kept.map(() => 1),
    );
  } else {
    forecast = trimmedWeightedMean(members, memberWeights, COMBINATION_TRIM);
  }
  return {
    forecast,
    model: 'combination',
    members,
    parameters: {
      members: pooled ? memberWeights.filter((w) => w > 0).length : kept ? kept.length : members.length,
      log_scale: logged ? 1 : 0,
      weighted: usable ? 1 : 0,
      trimmed: kept || pooled ? 0 : COMBINATION_TRIM,
      pooled: pooled ? 1 : 0,
      level_stationary: kept ? 1 : 0,
      ...seasonParameter(history),
    },
  };
}

/** How far past the history's own reach a member may stray from the members' median (reinDivergentMembers). */
export const DIVERGENCE_FACTOR = 3;

/**
 * Replaces, in place, each member whose forecast strays from the members' per-step median by more
 * than DIVERGENCE_FACTOR times the history's largest absolute value times the most the history
 * itself grew over at most the horizon (positive values): by that median. A member that runs away
 * (a drift fitted to a spike or to a few noisy values, compounding on the log scale) otherwise
 * outweighs the trimming when two members share the model (the airline member falls back to
 * ARIMA(0,1,1) with drift where it cannot fit, and so is the drift member). A history that grew
 * 200-fold (hyperinflation) lets its members grow as much; on every benchmark set no member is
 * reined in.
 */
export function reinDivergentMembers(members: number[][], values: readonly number[]): void {
  if (members.length < 3) return;
  const horizon = members[0].length;
  let scale = 0;
  for (const v of values) scale = Math.max(scale, Math.abs(v));
  if (!(scale > 0)) return;
  let growth = 1;
  for (let s = 0; s < values.length; s++) {
    if (!(values[s] > 0)) continue;
    for (let t = s + 1; t < values.length && t - s <= horizon; t++) if (values[t] > 0) growth = Math.max(growth, values[t] / values[s]);
  }
  const bound = DIVERGENCE_FACTOR * scale * growth;
  const median = new Array<number>(horizon);
  for (let j = 0; j < horizon; j++) {
    const column = members.map((m) => m[j]).sort((a, b) => a - b);
    median[j] = medianOfSorted(column);
  }
  for (let m = 0; m < members.length; m++) {
    if (members[m].some((v, j) => !(Math.abs(v - median[j]) <= bound))) members[m] = median.slice();
  }
}

/**
 * The members that extrapolate no drift: the level-or-damped-trend member and the automatic
 * ARIMA (which, on a series the KPSS test finds level-stationary, takes no difference). On such
 * a series the others (Theta's half slope, the ARIMA(0,1,1) drift) extrapolate a trend the data
 * do not show, so they are left out of the mean; the airline model stays when the history is
 * seasonal, as the one member that fits the season itself rather than through the shared,
 * shrunk decomposition (without it simulated quarterly data lost what smooth demand gained).
 */
function keptOnLevel(member: CombinationMember, history: PreparedHistory): boolean {
  if (member === 'damped' || member === 'arima_auto') return true;
  return member === 'arima' && history.adjustment.seasonal && airlineFits(history.values.length, history.period);
}

/**
 * Whether the (adjusted) history has no trend to extrapolate: at least LEVEL_OR_TREND_MIN_LENGTH
 * values (on shorter histories the test has too little power, and took real trends away from
 * yearly and quarterly series) and the KPSS test at 5% does not reject stationarity around a
 * level, the test by which R's auto.arima decides to difference.
 */
export function levelStationary(history: PreparedHistory): boolean {
  const adjusted = history.adjustment.adjusted;
  return adjusted.length >= LEVEL_OR_TREND_MIN_LENGTH && kpssStatistic(adjusted) <= KPSS_CRITICAL;
}

/**
 * Members left out at each end of every horizon step before the weighted mean (a trimmed
 * mean, Jose & Winkler 2008): one member that runs away, such as a trend extrapolated from
 * noise, no longer drags the combination with it. At every season length: weekly data (52)
 * was once left untrimmed, when its seasons often went unrecognised and the airline member
 * alone carried them; since long seasons also count by their strength, trimming helps there
 * too (simulated weekly MASE 0.643 to 0.639, on 800 series 0.666 to 0.664).
 */
export const COMBINATION_TRIM = 1;

/**
 * Per step, the weighted mean of the forecasts left after dropping the `trim` lowest and
 * `trim` highest (ties in member order); the plain weighted mean when too few would remain.
 * A step where any member is not finite is NaN, as the plain mean would be.
 */
export function trimmedWeightedMean(forecasts: readonly (readonly number[])[], weights: readonly number[], trim: number): number[] {
  if (trim <= 0 || forecasts.length - 2 * trim < 1) return weightedMean(forecasts, weights);
  const horizon = forecasts.length > 0 ? forecasts[0].length : 0;
  const order = forecasts.map((_, k) => k);
  return Array.from({ length: horizon }, (_, j) => {
    if (!forecasts.every((f) => Number.isFinite(f[j]))) return Number.NaN;
    order.sort((a, b) => forecasts[a][j] - forecasts[b][j] || a - b);
    let sum = 0;
    let total = 0;
    for (let i = trim; i < order.length - trim; i++) {
      sum += weights[order[i]] * forecasts[order[i]][j];
      total += weights[order[i]];
    }
    return total > 0 ? sum / total : weightedMean(forecasts, weights)[j];
  });
}

export function weightedMean(forecasts: readonly (readonly number[])[], weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const horizon = forecasts.length > 0 ? forecasts[0].length : 0;
  return Array.from({ length: horizon }, (_, j) => {
    let sum = 0;
    // A member weighted 0 is left out, even where its forecast is not finite.
    for (let k = 0; k < forecasts.length; k++) if (weights[k] !== 0) sum += weights[k] * forecasts[k][j];
    return sum / total;
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
      return {
        forecast: onAdjusted(history, thetaOnAdjusted(adjustment.adjusted, horizon)),
        model: 'theta',
        parameters: { theta: 2, ...seasonParameter(history) },
      };
    case 'optimized_theta':
      return {
        forecast: onAdjusted(history, optimizedThetaOnAdjusted(adjustment.adjusted, horizon)),
        model: 'optimized_theta',
        parameters: seasonParameter(history),
      };
    case 'arima':
      return arimaFamily(history, horizon);
    case 'combination':
      return combination(history, horizon, (member) => runMethod(member, history, horizon));
    case 'ets':
      return automaticEts(history, horizon);
    case 'holt_winters_additive':
      return holtWinters(history, horizon, false);
    case 'holt_winters_multiplicative':
      return holtWinters(history, horizon, true);
    case 'croston':
      return { forecast: croston(values, horizon), model: 'croston', parameters: { alpha: 0.1 } };
    case 'sba':
      return { forecast: sba(values, horizon), model: 'sba', parameters: { alpha: 0.1 } };
    case 'tsb':
      return { forecast: tsb(values, horizon), model: 'tsb', parameters: { alpha: 0.1, beta: 0.1 } };
    case 'adida':
      return { forecast: adida(values, horizon), model: 'adida' };
  }
}
