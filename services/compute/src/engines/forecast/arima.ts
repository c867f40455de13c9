/**
 * The airline model, seasonal ARIMA(0,1,1)(0,1,1)_m of Box & Jenkins, fitted by
 * conditional sum of squares on the log scale for positive data; a compact
 * member of the ARIMA family that models the season by differencing rather than
 * by decomposition, which makes it a diverse partner for Theta and ETS.
 */
import { nelderMead } from './optimize';
import { robustScale } from './statistics';

export interface AirlineFit {
  theta: number;
  seasonalTheta: number;
  /** Whether the model was fitted on log values. */
  logScale: boolean;
}

/** The least history: the double difference needs m + 1 points and the fit a few more seasons. */
export function airlineFits(length: number, period: number): boolean {
  return period >= 2 && length >= 3 * period + 2;
}

function residuals(w: Float64Array, period: number, theta: number, seasonalTheta: number, out: Float64Array | null): number {
  const e = out ?? new Float64Array(w.length);
  let sse = 0;
  for (let t = 0; t < w.length; t++) {
    const e1 = t >= 1 ? e[t - 1] : 0;
    const em = t >= period ? e[t - period] : 0;
    const em1 = t >= period + 1 ? e[t - period - 1] : 0;
    const value = w[t] - theta * e1 - seasonalTheta * em - theta * seasonalTheta * em1;
    e[t] = value;
    sse += value * value;
  }
  return sse;
}

/** Forecasts `horizon` points; null when the history is too short for the model. */
export function airline(
  values: readonly number[],
  period: number,
  horizon: number,
  log = true,
): { forecast: number[]; fit: AirlineFit } | null {
  const n = values.length;
  if (!airlineFits(n, period)) return null;
  const logScale = log && values.every((v) => v > 0);
  const y = Float64Array.from(values, (v) => (logScale ? Math.log(v) : v));
  const w = new Float64Array(n - period - 1);
  for (let t = period + 1; t < n; t++) w[t - period - 1] = y[t] - y[t - 1] - y[t - period] + y[t - period - 1];
  const decode = (x: readonly number[]) => [Math.tanh(x[0]) * 0.99, Math.tanh(x[1]) * 0.99];
  const best = nelderMead(
    (x) => {
      const [a, b] = decode(x);
      return residuals(w, period, a, b, null);
    },
    [-0.4, -0.6].map((v) => Math.atanh(v / 0.99)),
    { steps: [0.5, 0.5], maxEvaluations: 200 },
  );
  const [theta, seasonalTheta] = decode(best.x);
  const e = new Float64Array(w.length);
  residuals(w, period, theta, seasonalTheta, e);
  // Future shocks are zero; the series is rebuilt by undoing both differences.
  const errorAt = (t: number) => (t >= 0 && t < e.length ? e[t] : 0);
  const extended = Array.from(y);
  for (let h = 0; h < horizon; h++) {
    const t = n + h;
    const k = t - period - 1; // index of this point in w
    const wHat = theta * errorAt(k - 1) + seasonalTheta * errorAt(k - period) + theta * seasonalTheta * errorAt(k - period - 1);
    extended.push(extended[t - 1] + extended[t - period] - extended[t - period - 1] + wHat);
  }
  const forecast = extended.slice(n).map((v) => (logScale ? Math.exp(v) : v));
  return { forecast, fit: { theta, seasonalTheta, logScale } };
}

/**
 * R's data-sufficiency rule, as for ETS (etsFits): more values than the model's parameters (MA,
 * drift, initial level) plus four. On 5 to 7 values the drift of a few noisy log-differences
 * compounded into forecasts of millions.
 */
export const MIN_DRIFT_HISTORY = 8;

/** ARIMA(0,1,1) with drift by conditional sum of squares (log scale for positive data): SES with a trend. Null when too short. */
export function arima011Drift(values: readonly number[], horizon: number): { forecast: number[]; theta: number; drift: number } | null {
  const n = values.length;
  if (n < MIN_DRIFT_HISTORY) return null;
  const logScale = values.every((v) => v > 0);
  const y = Float64Array.from(values, (v) => (logScale ? Math.log(v) : v));
  const w = new Float64Array(n - 1);
  for (let t = 1; t < n; t++) w[t - 1] = y[t] - y[t - 1];
  levelShiftsAsNoChange(w);
  const sse = (theta: number, drift: number) => {
    let e = 0;
    let sum = 0;
    for (let t = 0; t < w.length; t++) {
      e = w[t] - drift - theta * e;
      sum += e * e;
    }
    return { sum, last: e };
  };
  const best = nelderMead(
    (x) => sse(Math.tanh(x[0]) * 0.99, x[1]).sum,
    [Math.atanh(-0.5 / 0.99), w.reduce((a, b) => a + b, 0) / w.length],
    { steps: [0.5, 0.01 + Math.abs(w.reduce((a, b) => a + Math.abs(b), 0) / w.length)], maxEvaluations: 200 },
  );
  const theta = Math.tanh(best.x[0]) * 0.99;
  const drift = best.x[1];
  const last = sse(theta, drift).last;
  const forecast: number[] = [];
  let level = y[n - 1];
  for (let h = 0; h < horizon; h++) {
    level += drift + (h === 0 ? theta * last : 0);
    forecast.push(logScale ? Math.exp(level) : level);
  }
  return { forecast, theta, drift };
}

/**
 * KPSS statistic for level stationarity (Kwiatkowski et al. 1992) with the
 * Newey-West long-run variance at the short lag truncation of R's tseries::kpss.test, trunc(3 sqrt(n) / 13).
 */
export function kpssStatistic(values: readonly number[]): number {
  const n = values.length;
  if (n < 3) return 0;
  let mean = 0;
  for (const v of values) mean += v;
  mean /= n;
  const e = values.map((v) => v - mean);
  let partial = 0;
  let eta = 0;
  for (let t = 0; t < n; t++) {
    partial += e[t];
    eta += partial * partial;
  }
  eta /= n * n;
  const lags = Math.trunc((3 * Math.sqrt(n)) / 13);
  let s2 = 0;
  for (let t = 0; t < n; t++) s2 += e[t] * e[t];
  s2 /= n;
  for (let l = 1; l <= lags; l++) {
    let sum = 0;
    for (let t = l; t < n; t++) sum += e[t] * e[t - l];
    s2 += (2 * (1 - l / (lags + 1)) * sum) / n;
  }
  return s2 > 0 ? eta / s2 : 0;
}

/** 5% critical value of the KPSS level test. */
export const KPSS_CRITICAL = 0.463;

export function difference(values: readonly number[]): number[] {
  const out: number[] = [];
  for (let t = 1; t < values.length; t++) out.push(values[t] - values[t - 1]);
  return out;
}

/** Writes the coefficients of a polynomial of order 1 or 2 from partial autocorrelations in (-1, 1) (Durbin-Levinson), so it is stationary or invertible by construction. */
function fromPartial(r: readonly number[], out: number[]): void {
  if (r.length === 1) out[0] = r[0];
  else if (r.length === 2) {
    out[0] = r[0] * (1 - r[1]);
    out[1] = r[1];
  }
}

/** R's auto.arima margin: an MA root closer to the unit circle than this makes the fit unusable. */
export const MIN_ROOT_MODULUS = 1.01;

/** Smallest modulus of the roots of 1 + m1 z + m2 z^2 (Infinity without roots). */
export function minMaRootModulus(ma: readonly number[]): number {
  const m1 = ma[0] ?? 0;
  const m2 = ma[1] ?? 0;
  if (m2 === 0) return m1 === 0 ? Number.POSITIVE_INFINITY : 1 / Math.abs(m1);
  const discriminant = m1 * m1 - 4 * m2;
  // Complex pair: both roots have modulus sqrt(1 / m2).
  if (discriminant < 0) return Math.sqrt(1 / m2);
  const root = Math.sqrt(discriminant);
  return Math.min(Math.abs((-m1 + root) / (2 * m2)), Math.abs((-m1 - root) / (2 * m2)));
}

export interface ArmaFit {
  p: number;
  d: number;
  q: number;
  ar: number[];
  ma: number[];
  /** Mean of the differenced series (the drift when d = 1), 0 without a constant. */
  constant: number;
  aicc: number;
}

/** Residuals start here for every order, so all orders are compared on the same points. */
const ARMA_START = 2;

/**
 * Conditional sum of squares of ARMA(p, q) with a constant on w. The residuals are
 * linear in the constant (e = e0 + c g), so it is solved in closed form; `e0` and
 * `g`, when given, are buffers as long as w that receive both parts of the residuals
 * (the optimiser's evaluations need only the sum of squares).
 */
function armaCss(
  w: Float64Array,
  ar: readonly number[],
  ma: readonly number[],
  withConstant: boolean,
  e0: Float64Array | null,
  g: Float64Array | null,
) {
  const n = w.length;
  const p = ar.length;
  const q = ma.length;
  const a1 = p > 0 ? ar[0] : 0;
  const a2 = p > 1 ? ar[1] : 0;
  const m1 = q > 0 ? ma[0] : 0;
  const m2 = q > 1 ? ma[1] : 0;
  const base = withConstant ? -(1 - a1 - a2) : 0;
  let s00 = 0;
  let s0g = 0;
  let sgg = 0;
  let e1 = 0;
  let e2 = 0;
  let g1 = 0;
  let g2 = 0;
  for (let t = ARMA_START; t < n; t++) {
    const value = w[t] - a1 * w[t - 1] - a2 * w[t - 2] - m1 * e1 - m2 * e2;
    const response = base - m1 * g1 - m2 * g2;
    if (e0 && g) {
      e0[t] = value;
      g[t] = response;
    }
    s00 += value * value;
    s0g += value * response;
    sgg += response * response;
    e2 = e1;
    e1 = value;
    g2 = g1;
    g1 = response;
  }
  const constant = withConstant && sgg > 0 ? -s0g / sgg : 0;
  const sse = s00 + 2 * constant * s0g + constant * constant * sgg;
  return { sse, constant };
}

function fitArma(
  w: Float64Array,
  p: number,
  q: number,
  withConstant: boolean,
  d: number,
  e0: Float64Array,
  g: Float64Array,
): ArmaFit | null {
  const dims = p + q;
  const ar = new Array<number>(p).fill(0);
  const ma = new Array<number>(q).fill(0);
  const partialAr = new Array<number>(p).fill(0);
  const partialMa = new Array<number>(q).fill(0);
  const decode = (x: readonly number[]) => {
    for (let i = 0; i < p; i++) partialAr[i] = 0.98 * Math.tanh(x[i]);
    for (let j = 0; j < q; j++) partialMa[j] = 0.98 * Math.tanh(x[p + j]);
    fromPartial(partialAr, ar);
    fromPartial(partialMa, ma);
  };
  let x: number[] = [];
  if (dims > 0) {
    x = nelderMead(
      (z) => {
        decode(z);
        return armaCss(w, ar, ma, withConstant, null, null).sse;
      },
      new Array<number>(dims).fill(0),
      { steps: new Array<number>(dims).fill(0.5), maxEvaluations: 60 * dims + 40, tolerance: 1e-7 },
    ).x;
  }
  decode(x);
  // Partial autocorrelations make the AR part stationary, but not the MA(2) part invertible:
  // a fit whose residuals need a root inside (or at) the unit circle is discarded, as R's
  // auto.arima discards one with a root of modulus under 1.01.
  if (minMaRootModulus(ma) < MIN_ROOT_MODULUS) return null;
  const { sse, constant } = armaCss(w, ar, ma, withConstant, e0, g);
  const m = w.length - ARMA_START;
  const k = dims + (withConstant ? 1 : 0) + 1;
  if (!(sse > 0) || m - k - 1 <= 0) return null;
  const aicc = m * Math.log(sse / m) + 2 * k + (2 * k * (k + 1)) / (m - k - 1);
  return { p, d, q, ar: ar.slice(), ma: ma.slice(), constant, aicc };
}

/**
 * Non-seasonal ARIMA chosen as R's auto.arima does in outline: the order of
 * differencing by repeated KPSS tests (at most 2), then p, q <= 2 by AICc, with
 * a constant (the drift once differenced) unless differenced twice. Fitted by
 * conditional sum of squares on the log scale for positive data. Meant for
 * seasonally adjusted series. Null when the history is too short.
 */
export function autoArima(values: readonly number[], horizon: number): { forecast: number[]; fit: ArmaFit; logScale: boolean } | null {
  const n = values.length;
  if (n < 10) return null;
  const logScale = values.every((v) => v > 0);
  const y = values.map((v) => (logScale ? Math.log(v) : v));
  let d = 0;
  let series = y;
  while (d < 2 && series.length > 8 && kpssStatistic(series) > KPSS_CRITICAL) {
    series = difference(series);
    d++;
  }
  const w = Float64Array.from(series);
  // Once differenced, the constant is a drift: a jump must not make one.
  if (d === 1) levelShiftsAsNoChange(w);
  const withConstant = d < 2;
  const e = new Float64Array(w.length);
  const g = new Float64Array(w.length);
  let best: ArmaFit | null = null;
  for (let p = 0; p <= 2; p++) {
    for (let q = 0; q <= 2; q++) {
      const fit = fitArma(w, p, q, withConstant, d, e, g);
      if (fit && (!best || fit.aicc < best.aicc)) best = fit;
    }
  }
  if (!best) return null;
  const { constant } = armaCss(w, best.ar, best.ma, withConstant, e, g);
  for (let t = ARMA_START; t < w.length; t++) e[t] += constant * g[t];
  // Forecast the differenced series (future shocks zero), then integrate d times.
  const extended = Array.from(w);
  const errors = Array.from(e);
  const c = best.constant;
  for (let h = 0; h < horizon; h++) {
    const t = extended.length;
    let value = c;
    for (let i = 0; i < best.p; i++) value += best.ar[i] * (extended[t - i - 1] - c);
    for (let j = 0; j < best.q; j++) value += best.ma[j] * errors[t - j - 1];
    extended.push(value);
    errors.push(0);
  }
  let path = extended.slice(w.length);
  const levels = [y];
  for (let k = 1; k < d; k++) levels.push(difference(levels[k - 1]));
  for (let k = d - 1; k >= 0; k--) {
    let last = levels[k][levels[k].length - 1];
    path = path.map((v) => (last += v));
  }
  return { forecast: path.map((v) => (logScale ? Math.exp(v) : v)), fit: best, logScale };
}

/** How many robust standard deviations from the median make a difference a level shift rather than part of a trend. */
export const LEVEL_SHIFT_SCALES = 5;

/**
 * A drift rests on the history's differences; one jump (a new customer, a lost one) would be
 * extrapolated as growth: 10 a month for 30 months, then 1,000 for 10, gave a drift that doubled
 * the forecast within a year. Differences further than LEVEL_SHIFT_SCALES robust standard
 * deviations from their median (1.4826 MAD; the mean absolute deviation when over half of them
 * are equal) count as level shifts and are replaced by the median, in place. The level itself is
 * untouched: forecasts start from the last value.
 */
export function levelShiftsAsNoChange(w: Float64Array): void {
  const n = w.length;
  if (n < 4) return;
  const { median, scale } = robustScale(w);
  if (!(scale > 0)) return;
  const limit = LEVEL_SHIFT_SCALES * scale;
  for (let t = 0; t < n; t++) if (Math.abs(w[t] - median) > limit) w[t] = median;
}
