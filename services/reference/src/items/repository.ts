import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';
import type { StoredHierarchy } from '../hierarchy-levels/values';

export interface ItemRecord extends NamedRecord {
  description: string;
  uom_id: number;
  unit_cost: number;
  unit_price: number;
  hierarchy: StoredHierarchy;
}

export const ITEMS = tenantCollection('items', [['name_lower']]);
