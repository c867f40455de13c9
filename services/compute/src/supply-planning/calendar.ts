import { BUCKET_SIZES, PlanningInputError, type BucketSize } from '../engines/mrp';

const DAY_MS = 86_400_000;

/** How far back "the same bucket a year earlier" lies: 52 weeks, 364 days (same weekday), 12 months. */
export const BUCKETS_PER_YEAR_SHIFT: Record<BucketSize, number> = { week: 52, day: 364, month: 12 };
/** The partner sell-through window before plan start: the last 13 weeks, in the plan's buckets. */
export const SELL_THROUGH_WINDOW: Record<BucketSize, number> = { week: 13, day: 91, month: 3 };

/**
 * The plan's buckets as a continuous numbering: bucket 0 starts at `period_starts[0]`, bucket
 * -1 is the one before it, bucket n the one after the horizon. Sales and inventory dates are
 * placed on it, so "a year earlier" and "the 13 weeks before plan start" are index offsets.
 */
export class BucketClock {
  readonly bucket: BucketSize;
  readonly buckets: number;
  private readonly startMs: number;
  private readonly startMonth: number;

  constructor(
    bucket: string,
    readonly periodStarts: readonly string[],
  ) {
    if (!(BUCKET_SIZES as readonly string[]).includes(bucket))
      throw new PlanningInputError('calendar.bucket', `must be one of ${BUCKET_SIZES.join(', ')}`);
    if (periodStarts.length === 0) throw new PlanningInputError('period_starts', 'needs at least one bucket');
    this.bucket = bucket as BucketSize;
    this.buckets = periodStarts.length;
    this.startMs = Date.parse(`${periodStarts[0]}T00:00:00Z`);
    const first = new Date(this.startMs);
    this.startMonth = first.getUTCFullYear() * 12 + first.getUTCMonth();
  }

  /** The bucket a date (`YYYY-MM-DD`) falls in; negative before plan start, >= buckets after the horizon. */
  indexOf(date: string): number {
    const ms = Date.parse(`${date.slice(0, 10)}T00:00:00Z`);
    if (this.bucket === 'month') {
      const d = new Date(ms);
      return d.getUTCFullYear() * 12 + d.getUTCMonth() - this.startMonth;
    }
    const days = Math.floor((ms - this.startMs) / DAY_MS);
    return this.bucket === 'day' ? days : Math.floor(days / 7);
  }

  /** First day of bucket `index` (any integer). */
  startOf(index: number): string {
    if (this.bucket === 'month') {
      const month = this.startMonth + index;
      return isoDate(Date.UTC(Math.floor(month / 12), month % 12, 1));
    }
    return isoDate(this.startMs + index * (this.bucket === 'day' ? 1 : 7) * DAY_MS);
  }

  /** Last day of bucket `index`. */
  endOf(index: number): string {
    return isoDate(Date.parse(`${this.startOf(index + 1)}T00:00:00Z`) - DAY_MS);
  }

  get yearShift(): number {
    return BUCKETS_PER_YEAR_SHIFT[this.bucket];
  }

  get sellThroughWindow(): number {
    return SELL_THROUGH_WINDOW[this.bucket];
  }
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
