import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';
import type { StoredHierarchy } from '../hierarchy-levels/values';

export interface CustomerGroupRecord extends NamedRecord {
  hierarchy: StoredHierarchy;
}

export const CUSTOMER_GROUPS = tenantCollection('customer_groups', [['name_lower']]);
