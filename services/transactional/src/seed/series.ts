/**
 * Deterministic demand series for the demo data: the same tenant gets the same numbers on
 * every fresh store, so tests and screenshots can rely on them.
 */
import { addDays } from '../common/records';

export const SERIES_KINDS = ['smooth', 'seasonal', 'trending', 'intermittent'] as const;
export type SeriesKind = (typeof SERIES_KINDS)[number];

/** `count` dates `step` days apart from `start`. */
export function datesFrom(start: string, count: number, step = 7): string[] {
  return Array.from({ length: count }, (_, i) => addDays(start, i * step));
}

/** A standard normal draw (Box-Muller). */
function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

export interface SeriesShape {
  kind: SeriesKind;
  /** Mean demand per period around which the series moves. */
  level: number;
  /** Digits kept after the decimal point (0 for countable units). */
  decimals: number;
}

/**
 * `periods` weekly quantities (never negative): smooth noise around the level, a yearly
 * wave, a steady climb, or mostly zeros with occasional orders.
 */
export function demandSeries(shape: SeriesShape, periods: number, random: () => number): number[] {
  const phase = random() * 2 * Math.PI;
  const orderChance = 0.15 + random() * 0.2;
  const scale = 10 ** shape.decimals;
  return Array.from({ length: periods }, (_, t) => {
    const noise = gaussian(random);
    let value: number;
    switch (shape.kind) {
      case 'smooth':
        value = shape.level * (1 + 0.12 * noise);
        break;
      case 'seasonal':
        value = shape.level * (1 + 0.45 * Math.sin((2 * Math.PI * t) / 52 + phase)) * (1 + 0.08 * noise);
        break;
      case 'trending':
        value = shape.level * (0.5 + t / Math.max(1, periods - 1)) * (1 + 0.08 * noise);
        break;
      case 'intermittent':
        value = random() < orderChance ? shape.level * (0.4 + random()) : 0;
        break;
    }
    return Math.max(0, Math.round(value * scale) / scale);
  });
}
