import { PlanningInputError, requireOneOf } from './validation';

/** Calendar granularities a plan can be bucketed in. */
export const BUCKET_SIZES = ['day', 'week', 'month'] as const;
export type BucketSize = (typeof BUCKET_SIZES)[number];

/** Day names in `Date.getUTCDay()` order, so the index is the JavaScript weekday number. */
export const WEEK_DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

export interface CalendarSpec {
  /** Any date inside the first bucket: `YYYY-MM-DD` or a Date (its UTC calendar day is used). */
  start: string | Date;
  bucket: BucketSize;
  /** Number of buckets, e.g. 104 weekly buckets for a two-year horizon. */
  count: number;
  /** First day of a weekly bucket; default `monday` (ISO 8601). Ignored for day and month buckets. */
  week_start?: WeekDay;
}

const DAY_MS = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAYS_PER_YEAR = 365.25;

/**
 * Start dates (`YYYY-MM-DD`, UTC) of `count` consecutive buckets. The first bucket is the one that
 * contains `start`: a week begins on `week_start` on or before it, a month on the 1st.
 */
export function bucketsFromCalendar(spec: CalendarSpec): string[] {
  const bucket = requireOneOf('bucket', spec.bucket, BUCKET_SIZES);
  const count = spec.count;
  if (!Number.isInteger(count) || count < 1) throw new PlanningInputError('count', 'must be an integer >= 1');
  const startMs = parseStart(spec.start);
  const starts = new Array<string>(count);
  if (bucket === 'month') {
    const d = new Date(startMs);
    const year = d.getUTCFullYear();
    const month = d.getUTCMonth();
    for (let i = 0; i < count; i++) starts[i] = isoDate(Date.UTC(year, month + i, 1));
    return starts;
  }
  let first = startMs;
  let step = DAY_MS;
  if (bucket === 'week') {
    const weekStart = WEEK_DAYS.indexOf(requireOneOf('week_start', spec.week_start ?? 'monday', WEEK_DAYS));
    const back = (new Date(startMs).getUTCDay() - weekStart + 7) % 7;
    first = startMs - back * DAY_MS;
    step = 7 * DAY_MS;
  }
  for (let i = 0; i < count; i++) starts[i] = isoDate(first + i * step);
  return starts;
}

/** Nominal buckets per year, the annualisation factor EOQ uses. */
export function bucketsPerYear(bucket: BucketSize): number {
  return bucket === 'day' ? 365 : bucket === 'week' ? 52 : 12;
}

/**
 * Buckets per year implied by a list of bucket start dates: 365.25 days over the average bucket
 * length, rounded (weekly -> 52, monthly -> 12, daily -> 365). A single bucket gives 52.
 */
export function bucketsPerYearFromStarts(periodStarts: readonly string[]): number {
  // Item-locations of one run share one calendar array; parse its dates once, not per item.
  let cached = bucketsPerYearCache.get(periodStarts);
  if (cached === undefined) {
    cached = computeBucketsPerYear(periodStarts);
    bucketsPerYearCache.set(periodStarts, cached);
  }
  return cached;
}

const bucketsPerYearCache = new WeakMap<readonly string[], number>();

function computeBucketsPerYear(periodStarts: readonly string[]): number {
  const n = periodStarts.length;
  if (n < 2) return 52;
  const spanDays =
    (parseIsoDate('period_starts.' + (n - 1), periodStarts[n - 1]) - parseIsoDate('period_starts.0', periodStarts[0])) / DAY_MS;
  if (!(spanDays > 0)) throw new PlanningInputError('period_starts', 'must be in ascending order');
  return Math.max(1, Math.round(DAYS_PER_YEAR / (spanDays / (n - 1))));
}

export function parseIsoDate(field: string, value: string): number {
  const m = typeof value === 'string' ? ISO_DATE.exec(value) : null;
  if (m === null) throw new PlanningInputError(field, 'must be a date YYYY-MM-DD');
  const year = Number(m[1]);
  const month = Number(m[2]) - 1;
  const day = Number(m[3]);
  const ms = Date.UTC(year, month, day);
  const d = new Date(ms);
  // Date.UTC rolls 2025-02-30 over into March; a round trip rejects such dates.
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month || d.getUTCDate() !== day) {
    throw new PlanningInputError(field, 'is not a calendar date');
  }
  return ms;
}

function parseStart(start: string | Date): number {
  if (start instanceof Date) {
    if (Number.isNaN(start.getTime())) throw new PlanningInputError('start', 'is an invalid Date');
    return Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  }
  return parseIsoDate('start', start);
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
