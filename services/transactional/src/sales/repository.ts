import type { Collection, CollectionSpec, Doc, Store } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import type { ApplySpec } from '../common/apply';
import type { PageSpec } from '../common/pages';
import { nameKey, tenantIndex as index } from '../common/records';

/**
 * A sales record; forecasts are sales records of sale type Forecast. The names of what it
 * refers to are copied in at write time (with lowercased twins to filter and sort on), so
 * a read never waits for the reference service.
 */
export interface SalesRecordDoc extends Doc {
  _id: number;
  tenant: string;
  item_customer_group_id: number;
  item_id: number;
  item_name: string;
  item_name_lower: string;
  customer_group_id: number;
  customer_group_name: string;
  customer_group_name_lower: string;
  sale_type_id: number;
  sale_type_name: string;
  sale_type_name_lower: string;
  timing_interval_id: number;
  timing_interval_span: string;
  timing_interval_span_lower: string;
  uom_id: number;
  uom_name: string;
  uom_abbr: string;
  sell_date: string;
  quantity: number;
  /** The last load that created or matched the record (replace mode deletes the others of its scope). */
  load_id: string;
  created_at: string;
  updated_at: string;
}

/**
 * Orders and filters served by an index (a page at any depth costs one range scan):
 * - sort `id`, `sell_date`, `item_name`, `customer_group_name`, `quantity`, `created_at`,
 *   `updated_at`, each ascending or descending;
 * - `item_name,sell_date` and `item_name,-sell_date` (and their reverses);
 * - with one sale type (the legacy walk, forecasts only): sort `id` or `sell_date`;
 * - with one item (or a list of up to 8, split per item): sort `id` or `sell_date`;
 * - replace-mode deletes: the records of a sale type (and customer group) scope, by id.
 * Other combinations read the matching records and sort them in memory.
 */
export const SALES: CollectionSpec = {
  name: 'sales',
  autoIncrement: true,
  indexes: [
    {
      name: 'upsert_key',
      keys: [
        ['tenant', 1],
        ['item_customer_group_id', 1],
        ['sale_type_id', 1],
        ['timing_interval_id', 1],
        ['sell_date', 1],
      ],
      unique: true,
    },
    index('tenant_id', '_id'),
    index('sale_type_id', 'sale_type_name_lower', '_id'),
    index('sell_date', 'sell_date', '_id'),
    index('sale_type_sell_date', 'sale_type_name_lower', 'sell_date', '_id'),
    index('item_id', 'item_name_lower', '_id'),
    index('item_sell_date', 'item_name_lower', 'sell_date', '_id'),
    index('item_sell_date_desc', 'item_name_lower', ['sell_date', -1], ['_id', -1]),
    index('customer_group_id', 'customer_group_name_lower', '_id'),
    index('quantity', 'quantity', '_id'),
    index('created_at', 'created_at', '_id'),
    index('updated_at', 'updated_at', '_id'),
    // Replace mode walks the scope's records only (a forecast replace never reads the history).
    index('scope_id', 'sale_type_id', 'customer_group_id', '_id'),
  ],
};

export function openSales(store: Store): Promise<Collection<SalesRecordDoc>> {
  return store.collection<SalesRecordDoc>(SALES);
}

export const SALES_PAGES: PageSpec = {
  sorts: {
    sell_date: { field: 'sell_date', type: 'string' },
    item_name: { field: 'item_name_lower', type: 'string' },
    customer_group_name: { field: 'customer_group_name_lower', type: 'string' },
    quantity: { field: 'quantity', type: 'number' },
    created_at: { field: 'created_at', type: 'string' },
    updated_at: { field: 'updated_at', type: 'string' },
  },
  fanOut: ['item_name_lower', 'sale_type_name_lower', 'customer_group_name_lower'],
};

/** Upsert key (item-customer-group, sale type, timing interval, sell_date); a match changes quantity and uom only. */
export const SALES_APPLY: ApplySpec<pb.SalesRow> = {
  key: ['item_customer_group_id', 'sale_type_id', 'timing_interval_id', 'sell_date'],
  keyOf: (row) => ({
    item_customer_group_id: row.item_customer_group_id,
    sale_type_id: row.sale_type_id,
    timing_interval_id: row.timing_interval_id,
    sell_date: row.sell_date,
  }),
  mutable: (row) => ({ quantity: row.quantity, uom_id: row.uom_id, uom_name: row.uom_name, uom_abbr: row.uom_abbr }),
  fixed: (row) => ({
    item_id: row.item_id,
    item_name: row.item_name,
    item_name_lower: nameKey(row.item_name),
    customer_group_id: row.customer_group_id,
    customer_group_name: row.customer_group_name,
    customer_group_name_lower: nameKey(row.customer_group_name),
    sale_type_name: row.sale_type_name,
    sale_type_name_lower: nameKey(row.sale_type_name),
    timing_interval_span: row.timing_interval_span,
    timing_interval_span_lower: nameKey(row.timing_interval_span),
  }),
  create: (row, stamp) => ({
    tenant: stamp.tenant,
    item_customer_group_id: row.item_customer_group_id,
    item_id: row.item_id,
    item_name: row.item_name,
    item_name_lower: nameKey(row.item_name),
    customer_group_id: row.customer_group_id,
    customer_group_name: row.customer_group_name,
    customer_group_name_lower: nameKey(row.customer_group_name),
    sale_type_id: row.sale_type_id,
    sale_type_name: row.sale_type_name,
    sale_type_name_lower: nameKey(row.sale_type_name),
    timing_interval_id: row.timing_interval_id,
    timing_interval_span: row.timing_interval_span,
    timing_interval_span_lower: nameKey(row.timing_interval_span),
    uom_id: row.uom_id,
    uom_name: row.uom_name,
    uom_abbr: row.uom_abbr,
    sell_date: row.sell_date,
    quantity: row.quantity,
    load_id: stamp.load_id,
    created_at: stamp.created_at,
    updated_at: stamp.updated_at,
  }),
};

export function toSalesRecord(doc: SalesRecordDoc): pb.SalesRecord {
  return {
    id: doc._id,
    item_customer_group_id: doc.item_customer_group_id,
    item_id: doc.item_id,
    item_name: doc.item_name,
    customer_group_id: doc.customer_group_id,
    customer_group_name: doc.customer_group_name,
    sale_type_id: doc.sale_type_id,
    sale_type_name: doc.sale_type_name,
    timing_interval_id: doc.timing_interval_id,
    timing_interval_span: doc.timing_interval_span,
    uom_id: doc.uom_id,
    uom_name: doc.uom_name,
    uom_abbr: doc.uom_abbr,
    sell_date: doc.sell_date,
    quantity: doc.quantity,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    item_hierarchy: [],
    customer_group_hierarchy: [],
  };
}
