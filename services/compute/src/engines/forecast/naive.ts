/** Benchmark methods: naive, seasonal naive and Naive2 (naive on seasonally adjusted data). */
import { reseasonalize, seasonallyAdjust } from './seasonality';

/** Repeats the last observation (zero for an empty history). */
export function naive(values: readonly number[], horizon: number): number[] {
  const last = values.length > 0 ? values[values.length - 1] : 0;
  return new Array<number>(horizon).fill(last);
}

/** Repeats the last full season; falls back to naive when less than one season is known. */
export function seasonalNaive(values: readonly number[], horizon: number, period: number): number[] {
  const n = values.length;
  if (period <= 1 || n < period) return naive(values, horizon);
  return Array.from({ length: horizon }, (_, j) => values[n - period + (j % period)]);
}

/** Naive2 of the M competitions: naive forecast of the seasonally adjusted series, reseasonalised. */
export function naive2(values: readonly number[], horizon: number, period: number): number[] {
  const adjustment = seasonallyAdjust(values, period);
  return reseasonalize(naive(adjustment.adjusted, horizon), adjustment, values.length);
}
