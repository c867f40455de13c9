/**
 * The period grid: ISO dates (YYYY-MM-DD, UTC) mapped to consecutive period
 * numbers for each planning frequency, and future period dates.
 */

export const FREQUENCIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** Season length per frequency: weekday pattern, week of year, month of year, quarter of year, none. */
export const SEASONAL_PERIODS: Readonly<Record<Frequency, number>> = {
  day: 7,
  week: 52,
  month: 12,
  quarter: 4,
  year: 1,
};

export function isFrequency(value: string): value is Frequency {
  return (FREQUENCIES as readonly string[]).includes(value);
}

const MS_PER_DAY = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface CalendarDate {
  year: number;
  /** 1..12 */
  month: number;
  day: number;
}

const MONTH_LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : MONTH_LENGTHS[month - 1];
}

/** Strict YYYY-MM-DD parser; null for malformed or impossible dates such as 2023-02-30. */
export function parseIsoDate(text: string): CalendarDate | null {
  const match = ISO_DATE.exec(text);
  if (!match) return null;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return { year, month, day };
}

export function formatIsoDate(date: CalendarDate): string {
  const pad = (v: number, width: number) => String(v).padStart(width, '0');
  return `${pad(date.year, 4)}-${pad(date.month, 2)}-${pad(date.day, 2)}`;
}

/** Days since 1970-01-01. */
export function dayNumber(date: CalendarDate): number {
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 onto 1900-1999.
  const d = new Date(0);
  d.setUTCFullYear(date.year, date.month - 1, date.day);
  return Math.round(d.getTime() / MS_PER_DAY);
}

function fromDayNumber(days: number): CalendarDate {
  const d = new Date(days * MS_PER_DAY);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/**
 * Consecutive period number of a date. Weeks count from `weekAnchor` (the first
 * date of the series) so any weekday can start the week.
 */
export function periodNumber(date: CalendarDate, frequency: Frequency, weekAnchor = 0): number {
  switch (frequency) {
    case 'day':
      return dayNumber(date);
    case 'week':
      return Math.floor((dayNumber(date) - weekAnchor) / 7);
    case 'month':
      return date.year * 12 + (date.month - 1);
    case 'quarter':
      return date.year * 4 + Math.floor((date.month - 1) / 3);
    case 'year':
      return date.year;
  }
}

/**
 * Date `count` periods after `date`. Monthly steps keep the day of month, clamped
 * to shorter months; a month-end date stays on month ends.
 */
export function addPeriods(date: CalendarDate, frequency: Frequency, count: number): CalendarDate {
  if (frequency === 'day') return fromDayNumber(dayNumber(date) + count);
  if (frequency === 'week') return fromDayNumber(dayNumber(date) + 7 * count);
  const months = count * (frequency === 'month' ? 1 : frequency === 'quarter' ? 3 : 12);
  const total = date.year * 12 + (date.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  const monthEnd = date.day === daysInMonth(date.year, date.month);
  const length = daysInMonth(year, month);
  return { year, month, day: monthEnd ? length : Math.min(date.day, length) };
}

/** The `horizon` period dates following the last history date, as ISO strings. */
export function futureDates(lastDate: CalendarDate, frequency: Frequency, horizon: number): string[] {
  return Array.from({ length: horizon }, (_, k) => formatIsoDate(addPeriods(lastDate, frequency, k + 1)));
}
