import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import type { UomRecord } from './repository';

export function toUom(r: UomRecord): pb.Uom {
  return { id: r._id, name: r.name, abbreviation: r.abbreviation, created_at: r.created_at, updated_at: r.updated_at };
}

export async function listUoms(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.Uoms> {
  return offsetPage(db.uoms, nameFilter(tenant, req.filter_name), req.page, (rs) => rs.map(toUom));
}

export async function getUom(db: ReferenceDb, tenant: string, id: number): Promise<pb.Uom> {
  return toUom(await findOwned(db.uoms, tenant, id, 'unit of measure'));
}

async function checkUomsUnique(db: ReferenceDb, tenant: string, inputs: pb.UomInput[], bag: FieldErrorBag, selfId?: number) {
  await checkUnique(
    db.uoms,
    tenant,
    'name',
    inputs.map((r, index) => ({ index, value: r.name, selfId })),
    bag,
  );
  await checkUnique(
    db.uoms,
    tenant,
    'abbreviation',
    inputs.map((r, index) => ({ index, value: r.abbreviation, selfId })),
    bag,
  );
}

export async function createUoms(db: ReferenceDb, tenant: string, req: pb.CreateUomsRequest): Promise<pb.Uoms> {
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    req.records.forEach((r, i) => {
      if (!r.name) bag.add(i, 'name', MESSAGES.required);
      if (!r.abbreviation) bag.add(i, 'abbreviation', MESSAGES.required);
    });
    await checkUomsUnique(db, tenant, req.records, bag);
    bag.throwIfAny();
  };
  const created = await insertValidated(db.uoms, tenant, validate, () =>
    req.records.map((r) => ({
      name: r.name!,
      name_lower: nameKey(r.name!),
      abbreviation: r.abbreviation!,
      abbreviation_lower: nameKey(r.abbreviation!),
    })),
  );
  return { records: created.map(toUom), page: undefined };
}

export async function updateUom(db: ReferenceDb, tenant: string, req: pb.UpdateUomRequest): Promise<pb.Uom> {
  const record = await findOwned(db.uoms, tenant, req.id, 'unit of measure');
  const patch = req.patch ?? {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    await checkUomsUnique(db, tenant, [patch], bag, record._id);
    bag.throwIfAny();
  };
  const set: Partial<UomRecord> = {};
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  if (patch.abbreviation !== undefined)
    Object.assign(set, { abbreviation: patch.abbreviation, abbreviation_lower: nameKey(patch.abbreviation) });
  return toUom(await updateValidated(db.uoms, record, validate, set));
}
