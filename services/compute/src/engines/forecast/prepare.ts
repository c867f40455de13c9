/**
 * Preparing demand history for forecasting (period grid, missing periods) and
 * shaping forecasts into plannable quantities.
 */
import { type CalendarDate, type Frequency, dayNumber, parseIsoDate, periodNumber } from './calendar';
import { medianOfSorted, robustScale } from './statistics';

export const MISSING_IMPUTATIONS = ['auto', 'zero', 'linear', 'forward_fill', 'none'] as const;
export type MissingImputation = (typeof MISSING_IMPUTATIONS)[number];

export const CONSTRAINTS = ['auto', 'non_negative', 'integer', 'none'] as const;
export type Constraint = (typeof CONSTRAINTS)[number];

export function isMissingImputation(value: string): value is MissingImputation {
  return (MISSING_IMPUTATIONS as readonly string[]).includes(value);
}

export function isConstraint(value: string): value is Constraint {
  return (CONSTRAINTS as readonly string[]).includes(value);
}

/**
 * Fills the gaps (null) of a series on a regular period grid.
 * - auto, zero: a period without a record had no sales, so it counts as 0.
 * - linear: straight line between the nearest known neighbours (edges copy the nearest known value).
 * - forward_fill: last known value carried forward (leading gaps take the first known value).
 * - none: gaps are dropped and the known values are kept in order.
 * A series without any known value becomes all zeros (or empty for none).
 */
export function imputeMissing(values: readonly (number | null)[], mode: MissingImputation = 'auto'): number[] {
  if (mode === 'none') return values.filter((v): v is number => v !== null);
  if (mode === 'auto' || mode === 'zero') return values.map((v) => v ?? 0);
  const known: number[] = [];
  values.forEach((v, t) => {
    if (v !== null) known.push(t);
  });
  if (known.length === 0) return values.map(() => 0);
  const result = new Array<number>(values.length);
  let next = 0;
  for (let t = 0; t < values.length; t++) {
    const v = values[t];
    if (v !== null) {
      result[t] = v;
      if (known[next] === t) next++;
      continue;
    }
    const after = next < known.length ? known[next] : -1;
    const before = next > 0 ? known[next - 1] : -1;
    if (mode === 'forward_fill') {
      result[t] = before >= 0 ? (values[before] as number) : (values[after] as number);
    } else if (before < 0) {
      result[t] = values[after] as number;
    } else if (after < 0) {
      result[t] = values[before] as number;
    } else {
      const a = values[before] as number;
      const b = values[after] as number;
      result[t] = a + ((b - a) * (t - before)) / (after - before);
    }
  }
  return result;
}

export interface DatedValue {
  /** ISO date YYYY-MM-DD. */
  date: string;
  /** Null marks a period known to be missing (empty value in the input). */
  value: number | null;
}

export interface PeriodSeries {
  /** One slot per period from the first to the last date; null where nothing was recorded. */
  values: (number | null)[];
  firstDate: CalendarDate;
  lastDate: CalendarDate;
}

/**
 * Places dated observations on the frequency grid, first to last date. Several
 * records in one period are summed (daily sales rolled up to weeks or months).
 * Throws on a malformed date; the points may come in any order.
 */
export function toPeriodSeries(points: readonly DatedValue[], frequency: Frequency): PeriodSeries {
  if (points.length === 0) throw new RangeError('a series needs at least one dated value');
  const parsed = points.map((p) => {
    const date = parseIsoDate(p.date);
    if (!date) throw new RangeError(`invalid date "${p.date}" (expected YYYY-MM-DD)`);
    return { date, day: dayNumber(date), value: p.value };
  });
  let first = parsed[0];
  let last = parsed[0];
  for (const p of parsed) {
    if (p.day < first.day) first = p;
    if (p.day > last.day) last = p;
  }
  const anchor = first.day;
  const start = periodNumber(first.date, frequency, anchor);
  const length = periodNumber(last.date, frequency, anchor) - start + 1;
  const values = new Array<number | null>(length).fill(null);
  for (const p of parsed) {
    if (p.value === null) continue;
    const slot = periodNumber(p.date, frequency, anchor) - start;
    values[slot] = (values[slot] ?? 0) + p.value;
  }
  return { values, firstDate: first.date, lastDate: last.date };
}

/** True when every value is a whole number (unit sales), which makes `auto` round forecasts. */
export function isIntegerHistory(values: readonly number[]): boolean {
  return values.length > 0 && values.every((v) => Number.isInteger(v));
}

/** True when some value is below zero: a signed series (net of returns, a rate, a logarithm), not a quantity. */
export function hasNegative(values: readonly (number | null)[]): boolean {
  return values.some((v) => v !== null && v < 0);
}

/**
 * The constraint for expected demand (the CLI's default): never below zero, but not rounded
 * (the API's `auto` rounds whole-unit histories), unless the history itself goes below zero:
 * a signed series (a rate, a logarithm, net sales after returns) is forecast as fitted.
 */
export function expectedDemandConstraint(history: readonly (number | null)[]): Constraint {
  return hasNegative(history) ? 'none' : 'non_negative';
}

/**
 * What a constraint means for one history: `auto` shapes forecasts like the history itself,
 * so a history that goes below zero is left signed (`none`); otherwise non-negative, and
 * whole units when every value is whole.
 */
export function resolveConstraint(constraint: Constraint, history: readonly number[]): Exclude<Constraint, 'auto'> {
  if (constraint !== 'auto') return constraint;
  if (hasNegative(history)) return 'none';
  return isIntegerHistory(history) ? 'integer' : 'non_negative';
}

/**
 * Shapes forecasts into plannable quantities.
 * - auto: like the history (resolveConstraint): signed when it goes below zero, else
 *   non_negative, and integer when the whole history is integer.
 * - non_negative: negative demand is clipped to 0.
 * - integer: non-negative whole units; the cumulative forecast is rounded so
 *   totals over the horizon are kept (0.3 a day becomes 0,1,0,0,1,... not all 0).
 * - none: unchanged.
 */
export function applyConstraint(forecast: readonly number[], constraint: Constraint, history: readonly number[]): number[] {
  const mode = resolveConstraint(constraint, history);
  if (mode === 'none') return forecast.slice();
  const clipped = forecast.map((v) => (v > 0 ? v : 0));
  if (mode === 'non_negative') return clipped;
  const result = new Array<number>(clipped.length);
  let cumulative = 0;
  let issued = 0;
  for (let i = 0; i < clipped.length; i++) {
    cumulative += clipped[i];
    if (!Number.isFinite(cumulative)) {
      // A total past the largest double (every such value is whole anyway): each period rounds alone.
      result[i] = Math.round(clipped[i]);
      continue;
    }
    // The epsilon keeps exact halves and float noise (2.9999999) from flipping the rounding.
    const target = Math.round(cumulative + 1e-9);
    result[i] = target - issued;
    issued = target;
  }
  return result;
}

/**
 * How many robust standard deviations (on the log scale of a non-negative history) a value must
 * stand above its neighbours to count as a data error. At 10 (in a first version of the rule),
 * real one-year peaks of economic series were taken out (the other R packages' yearly series went
 * from MASE 3.054 to 3.130); at 20 no benchmark set moves by more than 0.002.
 */
export const SPIKE_SCALES = 20;

/** Most values of a history that may be taken for spikes (a share of its length, at least one); more is heavy-tailed demand. */
const MAX_SPIKE_SHARE = 0.05;

/**
 * The history with each isolated spike (a data-entry error, a one-off order) replaced by the
 * median of the values around it, for a continuous series; how many were replaced. A value is
 * a spike when, on the log scale of a non-negative history (log1p, so zeros count), it stands
 * SPIKE_SCALES robust standard deviations above the median of the two values either side of it,
 * and as far above each next neighbour (a step up that stays is a level shift, not a spike), and,
 * once the history holds two seasons, as far above the median of the same period in the other
 * seasons (a yearly peak is the season); or as far below all three, when it is not zero (a
 * decimal point in the wrong place; a period without sales is demand). Only values with two
 * others on each side are judged: a median of one side's values lags a trend, and the last values
 * cannot yet be told from the start of a shift. When more than MAX_SPIKE_SHARE of
 * the values qualify, none is replaced: that is how the item sells.
 */
export function withoutIsolatedSpikes(values: readonly number[], period: number): { values: readonly number[]; replaced: number } {
  const n = values.length;
  if (n < 8) return { values, replaced: 0 };
  const logScale = !hasNegative(values);
  const y = logScale ? values.map(Math.log1p) : values;
  const residuals = new Float64Array(n);
  for (let t = 0; t < n; t++) residuals[t] = y[t] - medianAround(y, t);
  const limit = SPIKE_SCALES * robustScale(residuals).scale;
  if (!(limit > 0)) return { values, replaced: 0 };
  const spikes: number[] = [];
  // Only where two values lie on each side: a one-sided median lags a trend (the first value of a line would count).
  for (let t = 2; t < n - 2; t++) {
    const sign = residuals[t] > 0 ? 1 : values[t] !== 0 ? -1 : 0;
    if (sign === 0) continue;
    if (!(sign * residuals[t] > limit) || sign * (y[t] - y[t + 1]) <= limit || sign * (y[t] - y[t - 1]) <= limit) continue;
    if (period > 1 && n >= 2 * period) {
      const season: number[] = [];
      for (let k = t % period; k < n; k += period) if (k !== t) season.push(y[k]);
      if (sign * (y[t] - medianOfSorted(season.sort((a, b) => a - b))) <= limit) continue;
    }
    spikes.push(t);
  }
  if (spikes.length === 0 || spikes.length > Math.max(1, MAX_SPIKE_SHARE * n)) return { values, replaced: 0 };
  const cleaned = values.slice();
  // The median of the recorded values themselves (the same middle pair as on the log scale), so
  // a constant history with one error is that constant again, not a float's round trip from it.
  for (const t of spikes) cleaned[t] = medianAround(values, t);
  return { values: cleaned, replaced: spikes.length };
}

/** Median of the values up to two positions either side of t (fewer at the ends), t itself left out. */
function medianAround(series: readonly number[], t: number): number {
  const window: number[] = [];
  for (let k = Math.max(0, t - 2); k <= Math.min(series.length - 1, t + 2); k++) if (k !== t) window.push(series[k]);
  return medianOfSorted(window.sort((a, b) => a - b));
}
