import { WEEK_DAYS, type CalendarRecord } from './repository';

const DAY_MS = 86_400_000;

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Start dates (YYYY-MM-DD, UTC) of the calendar's first `count` buckets: a week begins on
 * `week_start` on or before `start_date`, a month on the 1st, a day is the day itself.
 */
export function bucketStarts(calendar: Pick<CalendarRecord, 'bucket' | 'week_start' | 'start_date'>, count: number): string[] {
  const start = Date.parse(`${calendar.start_date}T00:00:00Z`);
  const first = new Date(start);
  if (calendar.bucket === 'month') {
    return Array.from({ length: count }, (_, i) => isoDate(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + i, 1)));
  }
  if (calendar.bucket === 'day') return Array.from({ length: count }, (_, i) => isoDate(start + i * DAY_MS));
  const back = (first.getUTCDay() - WEEK_DAYS.indexOf(calendar.week_start) + 7) % 7;
  return Array.from({ length: count }, (_, i) => isoDate(start + (i * 7 - back) * DAY_MS));
}
