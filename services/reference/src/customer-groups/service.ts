import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import { levelsOf } from '../hierarchy-levels/repository';
import { applyHierarchy, presentHierarchy } from '../hierarchy-levels/values';
import type { CustomerGroupRecord } from './repository';

async function presentCustomerGroups(db: ReferenceDb, tenant: string, records: CustomerGroupRecord[]): Promise<pb.CustomerGroup[]> {
  if (records.length === 0) return [];
  const levels = await levelsOf(db.levels, tenant, 'customer_group');
  return records.map((r) => ({
    id: r._id,
    name: r.name,
    hierarchy: presentHierarchy(r.hierarchy, levels),
    created_at: r.created_at,
    updated_at: r.updated_at,
  }));
}

export async function listCustomerGroups(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.CustomerGroups> {
  return offsetPage(db.customerGroups, nameFilter(tenant, req.filter_name), req.page, (rs) => presentCustomerGroups(db, tenant, rs));
}

export async function getCustomerGroup(db: ReferenceDb, tenant: string, id: number): Promise<pb.CustomerGroup> {
  return (await presentCustomerGroups(db, tenant, [await findOwned(db.customerGroups, tenant, id, 'customer group')]))[0]!;
}

export async function createCustomerGroups(
  db: ReferenceDb,
  tenant: string,
  req: pb.CreateCustomerGroupsRequest,
): Promise<pb.CustomerGroups> {
  let hierarchies: CustomerGroupRecord['hierarchy'][] = [];
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    const levels = await levelsOf(db.levels, tenant, 'customer_group');
    req.records.forEach((r, i) => {
      if (!r.name) bag.add(i, 'name', MESSAGES.required);
    });
    hierarchies = req.records.map((r, i) => applyHierarchy({}, r.hierarchy, levels, bag, i));
    await checkUnique(
      db.customerGroups,
      tenant,
      'name',
      req.records.map((r, index) => ({ index, value: r.name })),
      bag,
    );
    bag.throwIfAny();
  };
  const created = await insertValidated(db.customerGroups, tenant, validate, () =>
    req.records.map((r, i) => ({ name: r.name!, name_lower: nameKey(r.name!), hierarchy: hierarchies[i]! })),
  );
  return { records: await presentCustomerGroups(db, tenant, created), page: undefined };
}

export async function updateCustomerGroup(db: ReferenceDb, tenant: string, req: pb.UpdateCustomerGroupRequest): Promise<pb.CustomerGroup> {
  const record = await findOwned(db.customerGroups, tenant, req.id, 'customer group');
  const patch = req.patch ?? {};
  const set: Partial<CustomerGroupRecord> = {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    if (patch.hierarchy) {
      set.hierarchy = applyHierarchy(record.hierarchy, patch.hierarchy, await levelsOf(db.levels, tenant, 'customer_group'), bag, 0);
    }
    await checkUnique(db.customerGroups, tenant, 'name', [{ index: 0, value: patch.name, selfId: record._id }], bag);
    bag.throwIfAny();
  };
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  const updated = await updateValidated(db.customerGroups, record, validate, set);
  return (await presentCustomerGroups(db, tenant, [updated]))[0]!;
}
