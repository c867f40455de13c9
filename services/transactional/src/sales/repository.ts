import type { Collection, Doc, Store } from '@supply/kit';

/** A sales record; forecasts are sales records of sale type Forecast. */
export interface SalesRecordDoc extends Doc {
  _id: number;
  tenant: string;
  item_customer_group_id: number;
  item_id: number;
  customer_group_id: number;
  sale_type_id: number;
  timing_interval_id: number;
  uom_id: number;
  sell_date: string;
  quantity: number;
  created_at: string;
  updated_at: string;
}

export function openSales(store: Store): Promise<Collection<SalesRecordDoc>> {
  return store.collection<SalesRecordDoc>({
    name: 'sales',
    autoIncrement: true,
    indexes: [
      { name: 'tenant_id', keys: [['tenant', 1], ['_id', 1]] },
      {
        name: 'upsert_key',
        keys: [['tenant', 1], ['item_customer_group_id', 1], ['sale_type_id', 1], ['timing_interval_id', 1], ['sell_date', 1]],
        unique: true,
      },
    ],
  });
}
