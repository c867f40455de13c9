import type { LocationType } from '@supply/contracts';
import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

export { LOCATION_TYPES, type LocationType } from '@supply/contracts';

export interface LocationRecord extends NamedRecord {
  type: LocationType;
}

export const LOCATIONS = tenantCollection('locations', [['name_lower']]);
