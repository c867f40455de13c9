/**
 * Sales records (History, Forecast, ...): one per item, customer group, sale type, timing
 * interval and sell date. A sales record hangs off an item-customer-group combination;
 * allow_record_creation decides whether a load may create a missing combination, not
 * whether it may create records.
 */
import type { supply_transactional_v1 as tx } from '@supply/contracts';
import type { CheckedRow } from '../rows';
import type { NameKind } from '../names';
import type { EntitySpec } from './spec';

export const SALES: EntitySpec<'sales'> = {
  entity: 'sales',
  jobKind: 'sales_sync',
  fields: ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'],
  required: ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'],
  keyFields: ['item_name', 'customer_group_name', 'sale_type_name', 'timing_interval', 'sell_date'],
  keyWords: 'item, customer group, sale type, timing interval and sell date',
  dateField: 'sell_date',
  scope: {
    sale_type: { field: 'sale_type_name', names: 'sale_types' },
    customer_group: { field: 'customer_group_name', names: 'customer_groups' },
  },
  noun: 'sales record',
  names: [
    ['sale_type_name', 'sale_types'],
    ['item_name', 'items'],
    ['customer_group_name', 'customer_groups'],
    ['timing_interval', 'timing_intervals'],
    ['uom', 'uoms'],
  ],
  refusesNewRecords: false,

  async resolveRows(rows, names, ctx) {
    const ref = (kind: NameKind, name: string) => names.record(kind, names.id(kind, name));
    const pairOf = (row: CheckedRow) => ({
      item_id: names.id('items', row.item_name!),
      customer_group_id: names.id('customer_groups', row.customer_group_name!),
    });
    const comboOf = await names.combinations(
      rows.map(({ row }) => pairOf(row)),
      ctx.call,
    );
    return rows.map(({ position, row }) => {
      const pair = pairOf(row);
      const combo = comboOf(pair);
      if (combo === 0 && !ctx.options.allow_record_creation) {
        const path = `${ctx.rows_path}.${position}.customer_group_name`;
        return {
          position,
          errors: [
            {
              row: position,
              field: path,
              message: `The item ${row.item_name} has no combination with customer group ${row.customer_group_name}, and allow_record_creation is false.`,
            },
          ],
        };
      }
      const item = ref('items', row.item_name!);
      const group = ref('customer_groups', row.customer_group_name!);
      const saleType = ref('sale_types', row.sale_type_name!);
      const interval = ref('timing_intervals', row.timing_interval!);
      const uom = ref('uoms', row.uom!);
      return {
        position,
        pair: combo === 0 ? pair : undefined,
        row: {
          item_customer_group_id: combo,
          item_id: item.id,
          item_name: item.name,
          customer_group_id: group.id,
          customer_group_name: group.name,
          sale_type_id: saleType.id,
          sale_type_name: saleType.name,
          timing_interval_id: interval.id,
          timing_interval_span: interval.name,
          uom_id: uom.id,
          uom_name: uom.name,
          uom_abbr: uom.abbreviation,
          sell_date: row.sell_date!,
          quantity: row.quantity,
        } satisfies tx.SalesRow,
      };
    });
  },

  apply(clients, load_id, rows, flags, call) {
    return clients.transactional.applySales({ load_id, rows: rows as tx.SalesRow[], ...flags }, call);
  },

  deleteOutsideLoad(clients, load_id, scopeIds, dry_run, call) {
    return clients.transactional.deleteSalesOutsideLoad(
      { load_id, sale_type_ids: scopeIds.sale_type ?? [], customer_group_ids: scopeIds.customer_group ?? [], dry_run },
      call,
    );
  },
};
