/**
 * Methods for intermittent demand: Croston, its Syntetos-Boylan bias correction
 * (SBA), Teunter-Syntetos-Babai (TSB) and aggregate-disaggregate ADIDA.
 */
import { fitSimpleSmoothing } from './ses';

export interface CrostonOptions {
  /** Smoothing constant for sizes and intervals; 0.1 is Croston's usual choice. */
  alpha?: number;
}

/** Smoothed demand size and inter-demand interval, both started at their first observed values. */
function crostonState(values: readonly number[], alpha: number): { size: number; interval: number } | null {
  let size = 0;
  let interval = 0;
  let sinceLast = 0;
  let seen = false;
  for (const v of values) {
    sinceLast++;
    if (v === 0) continue;
    if (!seen) {
      size = v;
      interval = sinceLast;
      seen = true;
    } else {
      size += alpha * (v - size);
      interval += alpha * (sinceLast - interval);
    }
    sinceLast = 0;
  }
  return seen ? { size, interval } : null;
}

/** Croston's method: smoothed size over smoothed interval, a flat demand rate. */
export function croston(values: readonly number[], horizon: number, options: CrostonOptions = {}): number[] {
  const state = crostonState(values, options.alpha ?? 0.1);
  const rate = state ? state.size / state.interval : 0;
  return new Array<number>(horizon).fill(rate);
}

/** Syntetos-Boylan approximation: Croston times (1 - alpha/2), removing Croston's upward bias. */
export function sba(values: readonly number[], horizon: number, options: CrostonOptions = {}): number[] {
  const alpha = options.alpha ?? 0.1;
  const state = crostonState(values, alpha);
  const rate = state ? ((1 - alpha / 2) * state.size) / state.interval : 0;
  return new Array<number>(horizon).fill(rate);
}

export interface TsbOptions {
  /** Smoothing constant for demand sizes (updated only when demand occurs). */
  alpha?: number;
  /** Smoothing constant for the occurrence probability (updated every period, so it decays during gaps). */
  beta?: number;
}

/** TSB: probability of demand times smoothed size; tracks obsolescence unlike Croston. */
export function tsb(values: readonly number[], horizon: number, options: TsbOptions = {}): number[] {
  const alpha = options.alpha ?? 0.1;
  const beta = options.beta ?? 0.1;
  let size = 0;
  let probability = 0;
  let seenDemand = false;
  for (let t = 0; t < values.length; t++) {
    const v = values[t];
    const occurred = v !== 0 ? 1 : 0;
    probability = t === 0 ? occurred : probability + beta * (occurred - probability);
    if (occurred) {
      size = seenDemand ? size + alpha * (v - size) : v;
      seenDemand = true;
    }
  }
  return new Array<number>(horizon).fill(seenDemand ? probability * size : 0);
}

/** Average number of periods per demand occurrence (n / non-zero count); null without demand. */
export function averageDemandInterval(values: readonly number[]): number | null {
  let occurrences = 0;
  for (const v of values) if (v !== 0) occurrences++;
  return occurrences > 0 ? values.length / occurrences : null;
}

/**
 * ADIDA: sum the series into buckets as long as the average demand interval
 * (so most buckets hold demand), forecast the buckets with SES, spread evenly.
 */
export function adida(values: readonly number[], horizon: number): number[] {
  const interval = averageDemandInterval(values);
  if (interval === null) return new Array<number>(horizon).fill(0);
  const bucket = Math.max(1, Math.min(values.length, Math.round(interval)));
  // Buckets are aligned to the end so the most recent one is complete.
  const buckets: number[] = [];
  for (let end = values.length; end - bucket >= 0; end -= bucket) {
    let sum = 0;
    for (let t = end - bucket; t < end; t++) sum += values[t];
    buckets.push(sum);
  }
  buckets.reverse();
  const level = fitSimpleSmoothing(buckets).level;
  return new Array<number>(horizon).fill(level / bucket);
}
