/**
 * Prediction intervals: the h-step error spread of simple exponential smoothing
 * on the (seasonally adjusted) history gives the shape over the horizon, and the
 * chosen method's own rolling-origin errors calibrate its width (split conformal
 * on errors scaled by that shape), so every method gets intervals, combinations
 * included. On a positive history whose spread follows its level (a growing item,
 * or one being phased out) the spread is a fraction of the level at each forecast
 * origin instead of one constant.
 */
import type { SeasonalAdjustment } from './seasonality';
import { fitSimpleSmoothing } from './ses';

export const INTERVAL_LEVELS = [80, 95] as const;

/** Standard normal quantiles of the two-sided 80% and 95% intervals. */
export const NORMAL_QUANTILE: Readonly<Record<(typeof INTERVAL_LEVELS)[number], number>> = { 80: 1.2816, 95: 1.96 };

export interface PredictionIntervals {
  lo80: number[];
  hi80: number[];
  lo95: number[];
  hi95: number[];
}

/** Per-position standard deviation of forecast errors, before calibration. */
export interface ErrorShape {
  /** Standard deviation of the error of a forecast made `step` (1-based) periods ahead of a period at `position`. */
  sd(step: number, position: number): number;
}

/**
 * SES error variance sigma^2 (1 + (h - 1) alpha^2) on the adjusted series, put
 * back on the scale of the season for multiplicative decomposition; sigma is
 * relative to the level at the forecast's origin when relativeSpread says so.
 */
export function errorShape(adjustment: SeasonalAdjustment): ErrorShape {
  const data = adjustment.adjusted;
  const fit = fitSimpleSmoothing(data);
  let sigma = data.length > 1 ? Math.sqrt(fit.sse / data.length) : 0;
  if (!(sigma > 0)) {
    // A perfectly smooth history still gets a spread: the mean absolute change, else a sliver of its level.
    // A single value shows no spread at all, so it gets a count's (Poisson: the square root of the level),
    // rather than an interval that claims a certainty one observation cannot give.
    let change = 0;
    for (let t = 1; t < data.length; t++) change += Math.abs(data[t] - data[t - 1]);
    const level = data.length > 0 ? Math.abs(data.reduce((a, b) => a + b, 0) / data.length) : 0;
    if (data.length === 1) sigma = Math.max(Math.sqrt(level), 1e-3 * level);
    else sigma = data.length > 1 && change > 0 ? change / (data.length - 1) : 1e-3 * level;
  }
  const alpha2 = fit.alpha * fit.alpha;
  const multiplicative = adjustment.seasonal && adjustment.kind === 'multiplicative';
  const relative = sigma > 0 ? relativeSpread(data, fit.alpha, fit.initialLevel) : null;
  return {
    sd(step, position) {
      const growth = Math.sqrt(1 + (step - 1) * alpha2);
      let base: number;
      if (relative) {
        const origin = Math.min(relative.levels.length - 1, Math.max(0, position - step + 1));
        base = relative.sigma * relative.levels[origin] * growth;
      } else base = sigma * growth;
      return multiplicative ? base * adjustment.indices[position % adjustment.period] : base;
    },
  };
}

/**
 * The spread as a fraction of the level (ETS(M,N,N)'s errors), when that explains a positive
 * history better than a constant spread (ETS(A,N,N)): the likelihoods of the two error kinds on
 * the same one-step forecasts. Levels[t] is the forecast of position t from the values before it
 * (levels[n], the last, is the forecast's own level). Null when the constant spread wins.
 */
function relativeSpread(data: readonly number[], alpha: number, initialLevel: number): { sigma: number; levels: Float64Array } | null {
  const n = data.length;
  if (n < 4) return null;
  const levels = new Float64Array(n + 1);
  let level = initialLevel;
  let absolute = 0;
  let ratio = 0;
  let logLevels = 0;
  for (let t = 0; t < n; t++) {
    if (!(level > 0) || !(data[t] > 0)) return null;
    levels[t] = level;
    const e = data[t] - level;
    absolute += e * e;
    ratio += (e / level) ** 2;
    logLevels += Math.log(level);
    level += alpha * e;
  }
  if (!(level > 0)) return null;
  levels[n] = level;
  if (!(absolute > 0) || !(ratio > 0)) return null;
  // -2 log-likelihood up to the same constant: n log(sigma^2) for additive errors, plus 2 sum log(level) for relative ones.
  if (n * Math.log(ratio / n) + 2 * logLevels >= n * Math.log(absolute / n)) return null;
  return { sigma: Math.sqrt(ratio / n), levels };
}

/** Holdout errors (actual - forecast) of one method, one row per forecast origin. */
export interface HoldoutErrors {
  /** Training length of each origin, i.e. the position of its first forecast. */
  cuts: readonly number[];
  errors: readonly (readonly number[])[];
}

/** Fewer scaled errors than this give no reliable tail quantile; the normal one is used instead. */
const MIN_CONFORMAL_POINTS = 8;

/**
 * Quantile multipliers for the 80% and 95% intervals: the split-conformal quantile
 * of |error| / shape over the holdout. The 95% one rests on the two or three
 * largest errors, so it is never narrower than the normal quantile.
 *
 * With `normalPrior` (continuous demand) the 80% one is shrunk towards the normal
 * quantile as if that were worth MIN_CONFORMAL_POINTS scaled errors: a holdout's
 * origins lie a period or two apart, so its errors are far from independent, and
 * a quantile of a dozen of them is an optimistic estimate (it ranged from too
 * narrow on economic series to about right on M3). It also joins the two rules
 * smoothly at MIN_CONFORMAL_POINTS, where a hard switch made one more holdout
 * point change the interval's width by the whole difference. Intermittent errors
 * are zero-inflated, far from normal, so their quantile stands alone.
 */
export function intervalMultipliers(shape: ErrorShape, holdout: HoldoutErrors | null, normalPrior = false): Record<80 | 95, number> {
  const ratios: number[] = [];
  if (holdout) {
    holdout.cuts.forEach((cut, o) => {
      holdout.errors[o].forEach((e, j) => {
        const sd = shape.sd(j + 1, cut + j);
        if (sd > 0 && Number.isFinite(e)) ratios.push(Math.abs(e) / sd);
      });
    });
  }
  const result = { 80: NORMAL_QUANTILE[80], 95: NORMAL_QUANTILE[95] };
  if (ratios.length < MIN_CONFORMAL_POINTS) return result;
  ratios.sort((a, b) => a - b);
  const n = ratios.length;
  for (const level of INTERVAL_LEVELS) {
    const rank = Math.min(n, Math.ceil(((n + 1) * level) / 100));
    const conformal = ratios[rank - 1];
    if (level === 95) result[95] = Math.max(NORMAL_QUANTILE[95], conformal);
    else if (normalPrior) result[80] = (n * conformal + MIN_CONFORMAL_POINTS * NORMAL_QUANTILE[80]) / (n + MIN_CONFORMAL_POINTS);
    else result[80] = conformal;
  }
  return result;
}

/**
 * Intervals around a point forecast that starts right after `historyLength`
 * points; clipped at zero for non-negative data, and always containing the point.
 */
export function predictionIntervals(
  forecast: readonly number[],
  historyLength: number,
  shape: ErrorShape,
  multipliers: Record<80 | 95, number>,
  nonNegative: boolean,
): PredictionIntervals {
  const out: PredictionIntervals = { lo80: [], hi80: [], lo95: [], hi95: [] };
  forecast.forEach((f, j) => {
    const sd = shape.sd(j + 1, historyLength + j);
    for (const level of INTERVAL_LEVELS) {
      let lo = f - multipliers[level] * sd;
      let hi = f + multipliers[level] * sd;
      if (nonNegative) {
        lo = Math.max(0, lo);
        hi = Math.max(0, hi);
      }
      out[`lo${level}`].push(Math.min(lo, f));
      out[`hi${level}`].push(Math.max(hi, f));
    }
  });
  return out;
}
