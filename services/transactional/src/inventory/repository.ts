import type { Collection, CollectionSpec, Doc, Store } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import type { ApplySpec } from '../common/apply';
import type { PageSpec } from '../common/pages';
import { nameKey, tenantIndex as index } from '../common/records';

/** Stock of an item at a location (and bin and lot) on a date; those five make the key a load upserts by. */
export interface InventoryRecordDoc extends Doc {
  _id: number;
  tenant: string;
  item_id: number;
  item_name: string;
  item_name_lower: string;
  location_id: number;
  location_name: string;
  location_name_lower: string;
  /** null when the row named none; part of the upsert key. */
  bin_name: string | null;
  lot_name: string | null;
  inventory_date: string;
  quantity: number;
  uom_id: number;
  uom_name: string;
  uom_abbr: string;
  load_id: string;
  created_at: string;
  updated_at: string;
}

/**
 * Served orders: `id`, `inventory_date`, `item_name`, `location_name`, `updated_at` (either
 * direction), and `inventory_date` with one item or one location. `quantity` and
 * `created_at` sort in memory.
 */
export const INVENTORY: CollectionSpec = {
  name: 'inventory',
  autoIncrement: true,
  indexes: [
    {
      name: 'upsert_key',
      keys: [
        ['tenant', 1],
        ['item_id', 1],
        ['location_id', 1],
        ['bin_name', 1],
        ['lot_name', 1],
        ['inventory_date', 1],
      ],
      unique: true,
    },
    index('tenant_id', '_id'),
    index('inventory_date', 'inventory_date', '_id'),
    index('item_id', 'item_name_lower', '_id'),
    index('item_date', 'item_name_lower', 'inventory_date', '_id'),
    index('location_id', 'location_name_lower', '_id'),
    index('location_date', 'location_name_lower', 'inventory_date', '_id'),
    index('updated_at', 'updated_at', '_id'),
    // Replace mode walks a location scope's records only.
    index('scope_id', 'location_id', '_id'),
  ],
};

export function openInventory(store: Store): Promise<Collection<InventoryRecordDoc>> {
  return store.collection<InventoryRecordDoc>(INVENTORY);
}

export const INVENTORY_PAGES: PageSpec = {
  sorts: {
    inventory_date: { field: 'inventory_date', type: 'string' },
    item_name: { field: 'item_name_lower', type: 'string' },
    location_name: { field: 'location_name_lower', type: 'string' },
    quantity: { field: 'quantity', type: 'number' },
    created_at: { field: 'created_at', type: 'string' },
    updated_at: { field: 'updated_at', type: 'string' },
  },
  fanOut: ['item_name_lower', 'location_name_lower'],
};

/** Upsert key (item, location, bin, lot, inventory_date); a match changes quantity and uom only. */
export const INVENTORY_APPLY: ApplySpec<pb.InventoryRow> = {
  key: ['item_id', 'location_id', 'bin_name', 'lot_name', 'inventory_date'],
  keyOf: (row) => ({
    item_id: row.item_id,
    location_id: row.location_id,
    bin_name: row.bin_name || null,
    lot_name: row.lot_name || null,
    inventory_date: row.inventory_date,
  }),
  mutable: (row) => ({ quantity: row.quantity, uom_id: row.uom_id, uom_name: row.uom_name, uom_abbr: row.uom_abbr }),
  fixed: (row) => ({
    item_name: row.item_name,
    item_name_lower: nameKey(row.item_name),
    location_name: row.location_name,
    location_name_lower: nameKey(row.location_name),
  }),
  create: (row, stamp) => ({
    tenant: stamp.tenant,
    item_id: row.item_id,
    item_name: row.item_name,
    item_name_lower: nameKey(row.item_name),
    location_id: row.location_id,
    location_name: row.location_name,
    location_name_lower: nameKey(row.location_name),
    bin_name: row.bin_name || null,
    lot_name: row.lot_name || null,
    inventory_date: row.inventory_date,
    quantity: row.quantity,
    uom_id: row.uom_id,
    uom_name: row.uom_name,
    uom_abbr: row.uom_abbr,
    load_id: stamp.load_id,
    created_at: stamp.created_at,
    updated_at: stamp.updated_at,
  }),
};

export function toInventoryRecord(doc: InventoryRecordDoc): pb.InventoryRecord {
  return {
    id: doc._id,
    item_id: doc.item_id,
    item_name: doc.item_name,
    location_id: doc.location_id,
    location_name: doc.location_name,
    bin_name: doc.bin_name ?? '',
    lot_name: doc.lot_name ?? '',
    inventory_date: doc.inventory_date,
    quantity: doc.quantity,
    uom_id: doc.uom_id,
    uom_name: doc.uom_name,
    uom_abbr: doc.uom_abbr,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}
