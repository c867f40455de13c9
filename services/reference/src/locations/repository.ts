import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

export const LOCATION_TYPES = ['warehouse', 'distribution_center', 'plant', 'store', 'supplier', 'partner'] as const;
export type LocationType = (typeof LOCATION_TYPES)[number];

export interface LocationRecord extends NamedRecord {
  type: LocationType;
}

export const LOCATIONS = tenantCollection('locations', [['name_lower']]);
