/**
 * Inventory records: stock of an item at a location (and bin and lot) on a date. Bin and
 * lot are optional parts of the key; a row without them is the item-location's unbinned,
 * unlotted stock.
 */
import type { supply_transactional_v1 as tx } from '@supply/contracts';
import type { NameKind } from '../names';
import type { EntitySpec } from './spec';

export const INVENTORY: EntitySpec<'inventory'> = {
  entity: 'inventory',
  jobKind: 'inventory_sync',
  fields: ['item_name', 'location_name', 'bin_name', 'lot_name', 'inventory_date', 'quantity', 'uom'],
  required: ['item_name', 'location_name', 'inventory_date', 'quantity', 'uom'],
  keyFields: ['item_name', 'location_name', 'bin_name', 'lot_name', 'inventory_date'],
  keyWords: 'item, location, bin, lot and inventory date',
  dateField: 'inventory_date',
  scope: {
    location: { field: 'location_name', names: 'locations' },
    item: { field: 'item_name', names: 'items' },
  },
  noun: 'inventory record',
  names: [
    ['item_name', 'items'],
    ['location_name', 'locations'],
    ['uom', 'uoms'],
  ],
  refusesNewRecords: true,

  async resolveRows(rows, names) {
    const ref = (kind: NameKind, name: string) => names.record(kind, names.id(kind, name));
    return rows.map(({ position, row }) => {
      const uom = ref('uoms', row.uom!);
      const item = ref('items', row.item_name!);
      const location = ref('locations', row.location_name!);
      return {
        position,
        row: {
          item_id: item.id,
          item_name: item.name,
          location_id: location.id,
          location_name: location.name,
          bin_name: row.bin_name ?? '',
          lot_name: row.lot_name ?? '',
          inventory_date: row.inventory_date!,
          quantity: row.quantity,
          uom_id: uom.id,
          uom_name: uom.name,
          uom_abbr: uom.abbreviation,
        } satisfies tx.InventoryRow,
      };
    });
  },

  apply(clients, load_id, rows, flags, call) {
    return clients.transactional.applyInventory({ load_id, rows: rows as tx.InventoryRow[], ...flags }, call);
  },

  deleteOutsideLoad(clients, load_id, scopeIds, dry_run, call) {
    return clients.transactional.deleteInventoryOutsideLoad(
      { load_id, location_ids: scopeIds.location ?? [], item_ids: scopeIds.item ?? [], dry_run },
      call,
    );
  },
};
