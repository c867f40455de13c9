import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { byIds, findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import { levelsOf } from '../hierarchy-levels/repository';
import { applyHierarchy, presentHierarchy } from '../hierarchy-levels/values';
import { resolveUomNames } from '../names/service';
import type { ItemRecord } from './repository';

/** Items as the API shows them: uom by name, hierarchy by level name. */
export async function presentItems(db: ReferenceDb, tenant: string, records: ItemRecord[]): Promise<pb.Item[]> {
  if (records.length === 0) return [];
  const [uoms, levels] = await Promise.all([
    byIds(
      db.uoms,
      tenant,
      records.map((r) => r.uom_id),
    ),
    levelsOf(db.levels, tenant, 'item'),
  ]);
  return records.map((r) => ({
    id: r._id,
    name: r.name,
    description: r.description,
    uom: uoms.get(r.uom_id)?.name ?? '',
    uom_id: r.uom_id,
    unit_cost: r.unit_cost,
    unit_price: r.unit_price,
    hierarchy: presentHierarchy(r.hierarchy, levels),
    created_at: r.created_at,
    updated_at: r.updated_at,
  }));
}

export async function listItems(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.Items> {
  return offsetPage(db.items, nameFilter(tenant, req.filter_name), req.page, (rs) => presentItems(db, tenant, rs));
}

export async function getItem(db: ReferenceDb, tenant: string, id: number): Promise<pb.Item> {
  const [item] = await presentItems(db, tenant, [await findOwned(db.items, tenant, id, 'item')]);
  return item!;
}

export async function createItems(db: ReferenceDb, tenant: string, req: pb.CreateItemsRequest): Promise<pb.Items> {
  let uomIds: number[] = [];
  let hierarchies: ItemRecord['hierarchy'][] = [];
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    const levels = await levelsOf(db.levels, tenant, 'item');
    uomIds = (
      await resolveUomNames(
        db,
        tenant,
        req.records.map((r) => r.uom ?? ''),
      )
    ).ids;
    req.records.forEach((r, i) => {
      if (!r.name) bag.add(i, 'name', MESSAGES.required);
      if (!r.uom) bag.add(i, 'uom', MESSAGES.required);
      else if (!uomIds[i]) bag.add(i, 'uom', MESSAGES.exists);
    });
    hierarchies = req.records.map((r, i) => applyHierarchy({}, r.hierarchy, levels, bag, i));
    await checkUnique(
      db.items,
      tenant,
      'name',
      req.records.map((r, index) => ({ index, value: r.name })),
      bag,
    );
    bag.throwIfAny();
  };
  const created = await insertValidated(db.items, tenant, validate, () =>
    req.records.map((r, i) => ({
      name: r.name!,
      name_lower: nameKey(r.name!),
      description: r.description ?? '',
      uom_id: uomIds[i]!,
      unit_cost: r.unit_cost ?? 0,
      unit_price: r.unit_price ?? 0,
      hierarchy: hierarchies[i]!,
    })),
  );
  return { records: await presentItems(db, tenant, created), page: undefined };
}

export async function updateItem(db: ReferenceDb, tenant: string, req: pb.UpdateItemRequest): Promise<pb.Item> {
  const record = await findOwned(db.items, tenant, req.id, 'item');
  const patch = req.patch ?? {};
  const set: Partial<ItemRecord> = {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    if (patch.uom !== undefined) {
      const [uomId] = (await resolveUomNames(db, tenant, [patch.uom])).ids;
      if (uomId) set.uom_id = uomId;
      else bag.add(0, 'uom', MESSAGES.exists);
    }
    if (patch.hierarchy)
      set.hierarchy = applyHierarchy(record.hierarchy, patch.hierarchy, await levelsOf(db.levels, tenant, 'item'), bag, 0);
    await checkUnique(db.items, tenant, 'name', [{ index: 0, value: patch.name, selfId: record._id }], bag);
    bag.throwIfAny();
  };
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.unit_cost !== undefined) set.unit_cost = patch.unit_cost;
  if (patch.unit_price !== undefined) set.unit_price = patch.unit_price;
  const updated = await updateValidated(db.items, record, validate, set);
  return (await presentItems(db, tenant, [updated]))[0]!;
}
