/**
 * Simple exponential smoothing fitted by least squares of one-step errors, the
 * ETS(A,N,N) fit by maximum likelihood. The initial level enters the errors
 * linearly, so it is solved in closed form and only alpha is searched.
 */
import { goldenSection } from './optimize';

export interface SimpleSmoothing {
  alpha: number;
  initialLevel: number;
  /** Level after the last observation, i.e. the flat forecast. */
  level: number;
  sse: number;
}

export const SES_ALPHA_MIN = 1e-4;
export const SES_ALPHA_MAX = 0.9999;

/**
 * For a fixed alpha: the least-squares initial level, resulting SSE and final level.
 * The one-step forecast of y_t is q^(t-1) l0 + r_(t-1) with q = 1 - alpha.
 */
export function smoothWithAlpha(values: readonly number[], alpha: number): SimpleSmoothing {
  const q = 1 - alpha;
  let r = 0;
  let power = 1;
  let sumPowerResidual = 0;
  let sumPowerSquared = 0;
  let sumResidualSquared = 0;
  for (let t = 0; t < values.length; t++) {
    const residual = values[t] - r;
    sumPowerResidual += power * residual;
    sumPowerSquared += power * power;
    sumResidualSquared += residual * residual;
    r = q * r + alpha * values[t];
    power *= q;
  }
  const initialLevel = sumPowerSquared > 0 ? sumPowerResidual / sumPowerSquared : 0;
  const sse = Math.max(0, sumResidualSquared - initialLevel * sumPowerResidual);
  return { alpha, initialLevel, level: power * initialLevel + r, sse };
}

/** Runs SES with a given alpha and initial level (no estimation). */
export function smoothWithParameters(values: readonly number[], alpha: number, initialLevel: number): number {
  let level = initialLevel;
  for (const v of values) level += alpha * (v - level);
  return level;
}

/**
 * Least-squares alpha: a coarse grid locates the basin (the SSE curve can have
 * several), golden-section search refines it.
 */
export function fitSimpleSmoothing(values: readonly number[]): SimpleSmoothing {
  if (values.length === 0) return { alpha: 0.5, initialLevel: 0, level: 0, sse: 0 };
  if (values.length === 1) return { alpha: 0.5, initialLevel: values[0], level: values[0], sse: 0 };
  const grid = [SES_ALPHA_MIN, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, SES_ALPHA_MAX];
  let bestIndex = 0;
  let bestSse = Number.POSITIVE_INFINITY;
  for (let i = 0; i < grid.length; i++) {
    const sse = smoothWithAlpha(values, grid[i]).sse;
    if (sse < bestSse) {
      bestSse = sse;
      bestIndex = i;
    }
  }
  const lower = grid[Math.max(0, bestIndex - 1)];
  const upper = grid[Math.min(grid.length - 1, bestIndex + 1)];
  const refined = goldenSection((alpha) => smoothWithAlpha(values, alpha).sse, lower, upper, 1e-5);
  const alpha = refined.value <= bestSse ? refined.x : grid[bestIndex];
  return smoothWithAlpha(values, alpha);
}
