import type { CalendarBucket as Bucket, WeekDay } from '@supply/contracts';
import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

export { CALENDAR_BUCKETS as BUCKETS, WEEK_DAYS, type CalendarBucket as Bucket, type WeekDay } from '@supply/contracts';

/** A planning calendar: `periods` consecutive buckets, the first one containing `start_date`. */
export interface CalendarRecord extends NamedRecord {
  bucket: Bucket;
  week_start: WeekDay;
  start_date: string;
  periods: number;
}

export const CALENDARS = tenantCollection('calendars', [['name_lower']]);
