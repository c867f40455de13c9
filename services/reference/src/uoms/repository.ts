import type { Collection, Doc, Store } from '@supply/kit';

export interface UomRecord extends Doc {
  _id: number;
  tenant: string;
  name: string;
  name_lower: string; // names are unique per tenant, case-insensitively
  abbreviation: string;
  created_at: string;
  updated_at: string;
}

export function openUoms(store: Store): Promise<Collection<UomRecord>> {
  return store.collection<UomRecord>({
    name: 'uoms',
    autoIncrement: true,
    indexes: [
      { name: 'tenant_name', keys: [['tenant', 1], ['name_lower', 1]], unique: true },
      { name: 'tenant_id', keys: [['tenant', 1], ['_id', 1]] },
    ],
  });
}
