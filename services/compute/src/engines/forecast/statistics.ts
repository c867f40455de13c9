/** Median of values already sorted ascending (the mean of the middle two for an even count); NaN when empty. */
export function medianOfSorted(sorted: ArrayLike<number>): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * The median and a robust standard deviation about it: 1.4826 times the median absolute
 * deviation, or 1.2533 times the mean absolute deviation when over half the values are equal
 * (a count that mostly repeats); 0 when all are equal.
 */
export function robustScale(values: ArrayLike<number>): { median: number; scale: number } {
  const n = values.length;
  const median = medianOfSorted(Float64Array.from(values).sort());
  const deviations = Float64Array.from(values, (v) => Math.abs(v - median)).sort();
  let scale = 1.4826 * medianOfSorted(deviations);
  if (!(scale > 0)) scale = n > 0 ? (1.2533 * deviations.reduce((a, b) => a + b, 0)) / n : 0;
  return { median, scale: scale > 0 ? scale : 0 };
}

/**
 * How much of a history's least-squares trend to extrapolate: the positive-part James-Stein
 * factor max(0, 1 - 1/t^2), t being the slope over its standard error. Scaling a slope b of
 * variance v by k costs (k - 1)^2 b^2 + k^2 v in expected squared error, least at
 * k = b^2 / (b^2 + v); b^2 - v estimates the true slope's square, which gives 1 - 1/t^2. A trend
 * the history cannot tell from noise (|t| <= 1) is dropped, a clear one (t = 5: 0.96) kept
 * nearly whole. 1 on fewer than four values (no residual spread to judge by) or an exact line.
 */
export function slopeShrinkage(values: ArrayLike<number>): number {
  const n = values.length;
  if (n < 4) return 1;
  const { slope, meanT, meanY, sxx } = leastSquaresLine(values);
  let sse = 0;
  for (let t = 0; t < n; t++) sse += (values[t] - meanY - slope * (t - meanT)) ** 2;
  const variance = sse / (n - 2) / sxx;
  if (!(variance > 0)) return 1;
  return Math.max(0, 1 - variance / (slope * slope));
}

/** Least-squares line of values on time 0..n-1: its slope, the means of time and values, and the spread of time (sum of squared deviations). */
export function leastSquaresLine(values: ArrayLike<number>): { slope: number; meanT: number; meanY: number; sxx: number } {
  const n = values.length;
  const meanT = (n - 1) / 2;
  let meanY = 0;
  for (let t = 0; t < n; t++) meanY += values[t];
  meanY /= n;
  let sxy = 0;
  let sxx = 0;
  for (let t = 0; t < n; t++) {
    sxy += (t - meanT) * (values[t] - meanY);
    sxx += (t - meanT) * (t - meanT);
  }
  return { slope: sxy / sxx, meanT, meanY, sxx };
}
