import type { Clients } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';

export interface HierarchyLevels {
  item_levels: string[];
  customer_group_levels: string[];
}

/**
 * Fills each record's hierarchy values (parallel to the tenant's level names) with one
 * batched reference call for the page's distinct items and customer groups.
 */
export async function attachHierarchy(clients: Clients, records: pb.SalesRecord[]): Promise<HierarchyLevels> {
  if (records.length === 0) return { item_levels: [], customer_group_levels: [] };
  const itemIds = [...new Set(records.map((record) => record.item_id))];
  const groupIds = [...new Set(records.map((record) => record.customer_group_id))];
  const found = await clients.reference.lookupIds({
    item_ids: itemIds,
    customer_group_ids: groupIds,
    sale_type_ids: [],
    timing_interval_ids: [],
    uom_ids: [],
    location_ids: [],
    include_hierarchy: true,
  });
  const items = new Map(found.items.map((item) => [item.id, item.hierarchy]));
  const groups = new Map(found.customer_groups.map((group) => [group.id, group.hierarchy]));
  // A record whose item or group is gone from reference data shows its levels unset.
  const unset = (levels: readonly string[]) => levels.map(() => '');
  for (const record of records) {
    record.item_hierarchy = items.get(record.item_id) ?? unset(found.item_levels);
    record.customer_group_hierarchy = groups.get(record.customer_group_id) ?? unset(found.customer_group_levels);
  }
  return { item_levels: found.item_levels, customer_group_levels: found.customer_group_levels };
}
