import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';
import type { Bucket } from '../calendars/repository';

/** What a plan run covers: `horizon` buckets of a calendar, over a set of item-locations. */
export interface ViewRecord extends NamedRecord {
  calendar_id: number;
  bucket: Bucket;
  horizon: number;
  item_location_ids: number[];
}

export const VIEWS = tenantCollection(
  'views',
  [['name_lower']],
  [
    {
      name: 'tenant_calendar',
      keys: [
        ['tenant', 1],
        ['calendar_id', 1],
      ],
    },
  ],
);
