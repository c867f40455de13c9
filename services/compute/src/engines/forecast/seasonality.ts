/**
 * Seasonality detection and classical decomposition, the way the M competitions
 * deseasonalise a series before applying non-seasonal methods.
 */

/** Sample autocorrelations r_1..r_maxLag (index k-1 holds r_k); zero for a constant series. */
export function autocorrelations(values: readonly number[], maxLag: number): number[] {
  const n = values.length;
  const result = new Array<number>(Math.max(0, maxLag)).fill(0);
  if (n === 0) return result;
  let mean = 0;
  for (const v of values) mean += v;
  mean /= n;
  let denominator = 0;
  for (const v of values) denominator += (v - mean) * (v - mean);
  if (!(denominator > 0)) return result;
  for (let k = 1; k <= maxLag && k < n; k++) {
    let sum = 0;
    for (let t = 0; t + k < n; t++) sum += (values[t] - mean) * (values[t + k] - mean);
    result[k - 1] = sum / denominator;
  }
  return result;
}

/** Two full cycles are the least a seasonal index can be estimated from. */
export function hasEnoughHistoryForSeason(length: number, period: number): boolean {
  return period > 1 && length >= 2 * period;
}

/**
 * Longest season the autocorrelation test alone decides. Its limit sums r_k^2 over every
 * shorter lag, so for a long season (52 weeks) a trend, which correlates every lag, inflates
 * it past what two to four cycles of history can show: weekly series with a plain yearly
 * season failed it. Longer seasons also count when their strength is at least
 * MIN_SEASONAL_STRENGTH.
 */
export const MAX_ACF_ONLY_SEASON = 24;

/** Seasonal strength from which a season counts (R's `nsdiffs(test = "seas")` threshold). */
export const MIN_SEASONAL_STRENGTH = 0.64;

/**
 * 90% autocorrelation test at the seasonal lag (M3/M4 benchmarks):
 * seasonal when |r_m| > 1.645 * sqrt((1 + 2 * sum_{k<m} r_k^2) / n); for seasons longer
 * than MAX_ACF_ONLY_SEASON, also when the season's strength is at least MIN_SEASONAL_STRENGTH.
 */
export function isSeasonal(values: readonly number[], period: number): boolean {
  const n = values.length;
  if (!hasEnoughHistoryForSeason(n, period)) return false;
  const r = autocorrelations(values, period);
  let sumSquares = 0;
  for (let k = 0; k < period - 1; k++) sumSquares += r[k] * r[k];
  const limit = 1.645 * Math.sqrt((1 + 2 * sumSquares) / n);
  if (Math.abs(r[period - 1]) > limit) return true;
  return period > MAX_ACF_ONLY_SEASON && seasonalStrength(values, period) >= MIN_SEASONAL_STRENGTH;
}

/**
 * Strength of the season (Wang, Smith & Hyndman 2006): 1 - Var(remainder) / Var(season +
 * remainder) of the series detrended by its centred moving average (by ratio when every value
 * is positive, else by difference), with classical seasonal indices; 0 without two cycles.
 */
export function seasonalStrength(values: readonly number[], period: number): number {
  if (!hasEnoughHistoryForSeason(values.length, period)) return 0;
  const kind: DecompositionKind = values.every((v) => v > 0) ? 'multiplicative' : 'additive';
  const trend = centredMovingAverage(values, period);
  const indices = seasonalIndices(values, period, kind, trend);
  const detrended: number[] = [];
  const remainder: number[] = [];
  for (let t = 0; t < values.length; t++) {
    const level = trend[t];
    if (Number.isNaN(level) || (kind === 'multiplicative' && !(level > 0))) continue;
    const d = kind === 'multiplicative' ? values[t] / level : values[t] - level;
    detrended.push(d);
    remainder.push(d - indices[t % period]);
  }
  const total = variance(detrended);
  return detrended.length > period && total > 0 ? Math.max(0, 1 - variance(remainder) / total) : 0;
}

function variance(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
}

export type DecompositionKind = 'multiplicative' | 'additive';

/**
 * Centred moving average of order `period` (2 x m for even m), NaN where the
 * window does not fit; the trend-cycle estimate of classical decomposition.
 */
export function centredMovingAverage(values: readonly number[], period: number): number[] {
  const n = values.length;
  const trend = new Array<number>(n).fill(Number.NaN);
  const half = Math.floor(period / 2);
  if (period % 2 === 1) {
    for (let t = half; t + half < n; t++) {
      let sum = 0;
      for (let k = -half; k <= half; k++) sum += values[t + k];
      trend[t] = sum / period;
    }
  } else {
    for (let t = half; t + half < n; t++) {
      let sum = 0.5 * values[t - half] + 0.5 * values[t + half];
      for (let k = -half + 1; k < half; k++) sum += values[t + k];
      trend[t] = sum / period;
    }
  }
  return trend;
}

/**
 * Seasonal indices of classical decomposition (R's `decompose`): index j belongs to
 * positions t with t % period === j, counted from the first observation.
 * Multiplicative indices average to 1, additive ones to 0.
 */
export function seasonalIndices(
  values: readonly number[],
  period: number,
  kind: DecompositionKind,
  /** The series' centred moving average, when the caller has it already. */
  movingAverage?: readonly number[],
): number[] {
  const neutral = kind === 'multiplicative' ? 1 : 0;
  if (period <= 1 || values.length < 2 * period) return new Array<number>(Math.max(1, period)).fill(neutral);
  const trend = movingAverage ?? centredMovingAverage(values, period);
  const sums = new Array<number>(period).fill(0);
  const counts = new Array<number>(period).fill(0);
  for (let t = 0; t < values.length; t++) {
    const level = trend[t];
    if (Number.isNaN(level)) continue;
    if (kind === 'multiplicative') {
      if (!(level > 0)) continue;
      sums[t % period] += values[t] / level;
    } else {
      sums[t % period] += values[t] - level;
    }
    counts[t % period]++;
  }
  const indices = sums.map((s, j) => (counts[j] > 0 ? s / counts[j] : neutral));
  const mean = indices.reduce((a, b) => a + b, 0) / period;
  if (kind === 'multiplicative') {
    if (!(mean > 0)) return new Array<number>(period).fill(1);
    return indices.map((v) => (v / mean > 0 ? v / mean : 1));
  }
  return indices.map((v) => v - mean);
}

/**
 * James-Stein shrinkage of seasonal indices towards no season (Miller & Williams
 * 2003): each index is an average of k noisy detrended ratios, so its deviation
 * from neutral is shrunk by max(0, 1 - (m - 3) v / S), v the variance of one
 * index's average (pooled within-season variance over k), S the sum of squared
 * deviations of the m indices. Strong, regular seasons are kept nearly as they
 * are; weak or noisy ones, the ones a short history estimates worst, are damped.
 */
export function shrinkSeasonalIndices(
  values: readonly number[],
  period: number,
  kind: DecompositionKind,
  indices: readonly number[],
): number[] {
  const neutral = kind === 'multiplicative' ? 1 : 0;
  if (period < 4 || indices.length !== period) return indices.slice();
  const trend = centredMovingAverage(values, period);
  let within = 0;
  let count = 0;
  for (let t = 0; t < values.length; t++) {
    const level = trend[t];
    if (Number.isNaN(level) || (kind === 'multiplicative' && !(level > 0))) continue;
    const detrended = kind === 'multiplicative' ? values[t] / level : values[t] - level;
    const deviation = detrended - indices[t % period];
    within += deviation * deviation;
    count++;
  }
  const perIndex = count / period;
  if (!(count > period) || !(perIndex > 0)) return indices.slice();
  const variance = within / (count - period) / perIndex;
  let spread = 0;
  for (const index of indices) spread += (index - neutral) ** 2;
  if (!(spread > 0)) return indices.slice();
  const factor = Math.max(0, 1 - ((period - 3) * variance) / spread);
  return indices.map((index) => neutral + factor * (index - neutral));
}

export interface SeasonalAdjustment {
  /** Series with the seasonal component removed (the input itself when not seasonal). */
  adjusted: number[];
  /** Indices by position modulo the period (all neutral when not seasonal). */
  indices: number[];
  kind: DecompositionKind;
  seasonal: boolean;
  period: number;
}

/**
 * Removes the season by classical decomposition when the series is seasonal:
 * multiplicative for strictly positive data, additive otherwise (ratios to a zero
 * trend are meaningless). Seasonality is tested unless the caller has decided it.
 */
export function seasonallyAdjust(
  values: readonly number[],
  period: number,
  seasonal: boolean = isSeasonal(values, period),
): SeasonalAdjustment {
  const positive = values.length > 0 && values.every((v) => v > 0);
  const kind: DecompositionKind = positive ? 'multiplicative' : 'additive';
  if (!seasonal || !hasEnoughHistoryForSeason(values.length, period)) {
    return { adjusted: values.slice(), indices: [kind === 'multiplicative' ? 1 : 0], kind, seasonal: false, period: 1 };
  }
  const indices = seasonalIndices(values, period, kind);
  const adjusted = values.map((v, t) => (kind === 'multiplicative' ? v / indices[t % period] : v - indices[t % period]));
  return { adjusted, indices, kind, seasonal: true, period };
}

/** Put the seasonal component back onto forecasts that start right after `historyLength` points. */
export function reseasonalize(forecast: readonly number[], adjustment: SeasonalAdjustment, historyLength: number): number[] {
  if (!adjustment.seasonal) return forecast.slice();
  const { indices, period, kind } = adjustment;
  return forecast.map((f, j) => {
    const index = indices[(historyLength + j) % period];
    return kind === 'multiplicative' ? f * index : f + index;
  });
}
