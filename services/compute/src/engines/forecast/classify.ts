/**
 * Demand classification of Syntetos & Boylan (2005): average demand interval
 * (ADI) against the squared coefficient of variation of demand sizes (CV²).
 */

export const SERIES_CLASSES = ['smooth', 'erratic', 'intermittent', 'lumpy', 'no_demand'] as const;
export type SeriesClass = (typeof SERIES_CLASSES)[number];

/** Cut-offs of Syntetos, Boylan & Croston (2005); a value on the cut-off belongs to the upper side. */
export const ADI_CUTOFF = 1.32;
export const CV2_CUTOFF = 0.49;

export interface SeriesProfile {
  seriesClass: SeriesClass;
  /** Periods per demand occurrence (length / non-zero count); null without any demand. */
  adi: number | null;
  /** Squared coefficient of variation of the non-zero values; null without any demand. */
  cv2: number | null;
  nonZeroCount: number;
}

/** Keeps CV² finite when non-zero values cancel out (returns as large as sales). */
const MAX_CV2 = 1e6;

export function classifySeries(values: readonly number[]): SeriesProfile {
  const nonZero = values.filter((v) => v !== 0);
  const count = nonZero.length;
  if (count === 0) return { seriesClass: 'no_demand', adi: null, cv2: null, nonZeroCount: 0 };
  const adi = values.length / count;
  const mean = nonZero.reduce((a, b) => a + b, 0) / count;
  // Sample variance, as R's sd() in tsintermittent::idclass; one demand has no spread.
  const variance = count > 1 ? nonZero.reduce((a, v) => a + (v - mean) * (v - mean), 0) / (count - 1) : 0;
  const cv2 = mean !== 0 ? Math.min(MAX_CV2, variance / (mean * mean)) : variance > 0 ? MAX_CV2 : 0;
  const intermittentTiming = adi >= ADI_CUTOFF;
  const variableSize = cv2 >= CV2_CUTOFF;
  const seriesClass: SeriesClass = intermittentTiming ? (variableSize ? 'lumpy' : 'intermittent') : variableSize ? 'erratic' : 'smooth';
  return { seriesClass, adi, cv2, nonZeroCount: count };
}

export function isIntermittentClass(seriesClass: SeriesClass): boolean {
  return seriesClass === 'intermittent' || seriesClass === 'lumpy';
}
