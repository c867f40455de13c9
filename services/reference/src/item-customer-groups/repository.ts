import { tenantCollection } from '../common/collections';
import type { TenantRecord } from '../common/records';

/** A demand series key: one item sold to one customer group. Created by sales loads, never by hand. */
export interface ItemCustomerGroupRecord extends TenantRecord {
  item_id: number;
  customer_group_id: number;
}

export const ITEM_CUSTOMER_GROUPS = tenantCollection('item_customer_groups', [['item_id', 'customer_group_id']]);
