/** Forecast accuracy measures used for model selection and benchmarking. */

/** Mean absolute error over paired points; 0 for empty input. */
export function meanAbsoluteError(actual: readonly number[], forecast: readonly number[]): number {
  const n = Math.min(actual.length, forecast.length);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.abs(actual[i] - forecast[i]);
  return sum / n;
}

/** Mean squared error over paired points; 0 for empty input. */
export function meanSquaredError(actual: readonly number[], forecast: readonly number[]): number {
  const n = Math.min(actual.length, forecast.length);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += (actual[i] - forecast[i]) ** 2;
  return sum / n;
}

/** M3 symmetric MAPE on the 0-200 scale; a point where both are zero counts as a perfect forecast. */
export function symmetricMape(actual: readonly number[], forecast: readonly number[]): number {
  const n = Math.min(actual.length, forecast.length);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const denominator = Math.abs(actual[i]) + Math.abs(forecast[i]);
    if (denominator > 0) sum += (200 * Math.abs(actual[i] - forecast[i])) / denominator;
  }
  return sum / n;
}

/**
 * In-sample MAE of the seasonal naive method with lag `period` (lag 1 when the
 * history is too short); the MASE denominator. Null when it cannot be computed
 * or is zero.
 */
export function seasonalNaiveScale(history: readonly number[], period: number): number | null {
  const lag = history.length > period ? Math.max(1, period) : 1;
  if (history.length <= lag) return null;
  let sum = 0;
  for (let t = lag; t < history.length; t++) sum += Math.abs(history[t] - history[t - lag]);
  const scale = sum / (history.length - lag);
  return scale > 0 ? scale : null;
}

/** Mean absolute scaled error; null when the history gives no usable scale. */
export function meanAbsoluteScaledError(
  actual: readonly number[],
  forecast: readonly number[],
  history: readonly number[],
  period: number,
): number | null {
  const scale = seasonalNaiveScale(history, period);
  return scale === null ? null : meanAbsoluteError(actual, forecast) / scale;
}
