import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

/** A timing interval is named by its span (the legacy sales read calls it `timing_interval_span`). */
export type TimingIntervalRecord = NamedRecord;

export const TIMING_INTERVALS = tenantCollection('timing_intervals', [['name_lower']]);
