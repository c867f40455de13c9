/**
 * The airline model, seasonal ARIMA(0,1,1)(0,1,1)_m of Box & Jenkins, fitted by
 * conditional sum of squares on the log scale for positive data; a compact
 * member of the ARIMA family that models the season by differencing rather than
 * by decomposition, which makes it a diverse partner for Theta and ETS.
 */
import { nelderMead } from './optimize';

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
export function airline(values: readonly number[], period: number, horizon: number): { forecast: number[]; fit: AirlineFit } | null {
  const n = values.length;
  if (!airlineFits(n, period)) return null;
  const logScale = values.every((v) => v > 0);
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

/** ARIMA(0,1,1) with drift by conditional sum of squares (log scale for positive data): SES with a trend. */
export function arima011Drift(values: readonly number[], horizon: number): { forecast: number[]; theta: number; drift: number } | null {
  const n = values.length;
  if (n < 4) return null;
  const logScale = values.every((v) => v > 0);
  const y = Float64Array.from(values, (v) => (logScale ? Math.log(v) : v));
  const w = new Float64Array(n - 1);
  for (let t = 1; t < n; t++) w[t - 1] = y[t] - y[t - 1];
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
