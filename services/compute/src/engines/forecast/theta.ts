/**
 * Theta methods on seasonally adjusted data: the standard Theta method of
 * Assimakopoulos & Nikolopoulos (2000), in Hyndman & Billah's SES-with-drift
 * form used by R's thetaf, and the dynamic optimised Theta model of
 * Fiorucci et al. (2016).
 */
import { nelderMead } from './optimize';
import { reseasonalize, seasonallyAdjust } from './seasonality';
import { fitSimpleSmoothing } from './ses';
import { leastSquaresLine, slopeShrinkage } from './statistics';

/** Least-squares slope of values on time. */
export function linearSlope(values: readonly number[]): number {
  return values.length < 2 ? 0 : leastSquaresLine(values).slope;
}

/**
 * Standard Theta on already deseasonalised data: SES plus half the linear-trend slope as drift;
 * `shrinkSlope` scales that slope by slopeShrinkage (as a combination member).
 */
export function thetaOnAdjusted(values: readonly number[], horizon: number, shrinkSlope = false): number[] {
  const n = values.length;
  if (n === 0) return new Array<number>(horizon).fill(0);
  const fit = fitSimpleSmoothing(values);
  const halfSlope = (linearSlope(values) * (shrinkSlope ? slopeShrinkage(values) : 1)) / 2;
  const alpha = fit.alpha;
  const memory = (1 - Math.pow(1 - alpha, n)) / alpha;
  return Array.from({ length: horizon }, (_, j) => fit.level + halfSlope * (j + memory));
}

/** Standard Theta method: seasonality test, multiplicative decomposition, theta lines 0 and 2. */
export function standardTheta(values: readonly number[], horizon: number, period: number): number[] {
  const adjustment = seasonallyAdjust(values, period);
  return reseasonalize(thetaOnAdjusted(adjustment.adjusted, horizon), adjustment, values.length);
}

export interface DynamicThetaFit {
  alpha: number;
  theta: number;
  initialLevel: number;
  level: number;
  /** Intercept and slope of the regression on all data (time 1..n). */
  intercept: number;
  slope: number;
  mse: number;
  historyLength: number;
}

/**
 * One pass of the dynamic Theta model for given alpha and theta. The one-step
 * forecast is l_(t-1) + w [q^(t-1) A_(t-1) + (1 - q^t)/alpha B_(t-1)] with the
 * regression coefficients A, B updated as data arrive; the initial level enters
 * linearly and is solved by least squares.
 */
function dynamicThetaPass(values: readonly number[], alpha: number, theta: number): DynamicThetaFit {
  const n = values.length;
  const q = 1 - alpha;
  const weight = 1 - 1 / theta;
  let mean = 0;
  let intercept = 0;
  let slope = 0;
  let r = 0;
  let power = 1;
  let sumPowerResidual = 0;
  let sumPowerSquared = 0;
  let sumResidualSquared = 0;
  for (let t = 1; t <= n; t++) {
    const y = values[t - 1];
    // Drift term needs a regression line, so it starts once two points are known.
    const drift = t > 2 ? weight * (power * intercept + ((1 - power * q) / alpha) * slope) : 0;
    const residual = y - r - drift;
    sumPowerResidual += power * residual;
    sumPowerSquared += power * power;
    sumResidualSquared += residual * residual;
    r = q * r + alpha * y;
    power *= q;
    const previousMean = mean;
    mean = ((t - 1) * mean + y) / t;
    slope = t === 1 ? 0 : ((t - 2) / (t + 1)) * slope + (6 / (t + 1)) * ((y - previousMean) / t);
    intercept = mean - ((t + 1) / 2) * slope;
  }
  const initialLevel = sumPowerSquared > 0 ? sumPowerResidual / sumPowerSquared : 0;
  const sse = Math.max(0, sumResidualSquared - initialLevel * sumPowerResidual);
  return {
    alpha,
    theta,
    initialLevel,
    level: power * initialLevel + r,
    intercept,
    slope,
    mse: n > 0 ? sse / n : 0,
    historyLength: n,
  };
}

const THETA_ALPHA_MIN = 0.01;
const THETA_ALPHA_MAX = 0.99;

function decodeTheta(x: readonly number[]): { alpha: number; theta: number } {
  const alpha = THETA_ALPHA_MIN + (THETA_ALPHA_MAX - THETA_ALPHA_MIN) / (1 + Math.exp(-x[0]));
  return { alpha, theta: 1 + Math.exp(x[1]) };
}

/** Fits alpha, theta >= 1 and the initial level by in-sample one-step MSE. */
export function fitDynamicTheta(values: readonly number[]): DynamicThetaFit {
  const best = nelderMead(
    (x) => {
      const { alpha, theta } = decodeTheta(x);
      return dynamicThetaPass(values, alpha, theta).mse;
    },
    [0, 0],
    { steps: [1, 1], maxEvaluations: 300, tolerance: 1e-10 },
  );
  const { alpha, theta } = decodeTheta(best.x);
  return dynamicThetaPass(values, alpha, theta);
}

export function forecastDynamicTheta(fit: DynamicThetaFit, horizon: number): number[] {
  const { alpha, theta, level, intercept, slope, historyLength: n } = fit;
  const q = 1 - alpha;
  const weight = 1 - 1 / theta;
  const qn = Math.pow(q, n);
  return Array.from({ length: horizon }, (_, j) => level + weight * (qn * intercept + (j + (1 - qn * q) / alpha) * slope));
}

/**
 * Dynamic optimised Theta (DOTM) on already deseasonalised data; `shrinkSlope` scales the final
 * regression slope by slopeShrinkage about the line's value at the history's middle.
 */
export function optimizedThetaOnAdjusted(values: readonly number[], horizon: number, shrinkSlope = false): number[] {
  if (values.length < 3) return thetaOnAdjusted(values, horizon, shrinkSlope);
  const fit = fitDynamicTheta(values);
  const factor = shrinkSlope ? slopeShrinkage(values) : 1;
  if (factor === 1) return forecastDynamicTheta(fit, horizon);
  const middle = (values.length + 1) / 2;
  const slope = fit.slope * factor;
  return forecastDynamicTheta({ ...fit, slope, intercept: fit.intercept + middle * (fit.slope - slope) }, horizon);
}

/** Dynamic optimised Theta with the same seasonality test and decomposition as the standard method. */
export function optimizedTheta(values: readonly number[], horizon: number, period: number): number[] {
  const adjustment = seasonallyAdjust(values, period);
  return reseasonalize(optimizedThetaOnAdjusted(adjustment.adjusted, horizon), adjustment, values.length);
}
