import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

export const BUCKETS = ['day', 'week', 'month'] as const;
export type Bucket = (typeof BUCKETS)[number];

/** Day names in `Date.getUTCDay()` order. */
export const WEEK_DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

/** A planning calendar: `periods` consecutive buckets, the first one containing `start_date`. */
export interface CalendarRecord extends NamedRecord {
  bucket: Bucket;
  week_start: WeekDay;
  start_date: string;
  periods: number;
}

export const CALENDARS = tenantCollection('calendars', [['name_lower']]);
