import type { supply_reference_v1 as pb } from '@supply/contracts';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import type { ReferenceDb } from '../db';
import type { SaleTypeRecord } from './repository';

function toSaleType(r: SaleTypeRecord): pb.SaleType {
  return { id: r._id, name: r.name, created_at: r.created_at, updated_at: r.updated_at };
}

export async function listSaleTypes(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.SaleTypes> {
  return offsetPage(db.saleTypes, nameFilter(tenant, req.filter_name), req.page, (rs) => rs.map(toSaleType));
}

export async function getSaleType(db: ReferenceDb, tenant: string, id: number): Promise<pb.SaleType> {
  return toSaleType(await findOwned(db.saleTypes, tenant, id, 'sale type'));
}
