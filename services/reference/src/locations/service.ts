import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import { LOCATION_TYPES, type LocationRecord, type LocationType } from './repository';

function toLocation(r: LocationRecord): pb.Location {
  return { id: r._id, name: r.name, type: r.type, created_at: r.created_at, updated_at: r.updated_at };
}

export async function listLocations(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.Locations> {
  return offsetPage(db.locations, nameFilter(tenant, req.filter_name), req.page, (rs) => rs.map(toLocation));
}

export async function getLocation(db: ReferenceDb, tenant: string, id: number): Promise<pb.Location> {
  return toLocation(await findOwned(db.locations, tenant, id, 'location'));
}

function checkType(bag: FieldErrorBag, i: number, type: string | undefined): void {
  if (type !== undefined && !(LOCATION_TYPES as readonly string[]).includes(type)) bag.add(i, 'type', MESSAGES.exists);
}

export async function createLocations(db: ReferenceDb, tenant: string, req: pb.CreateLocationsRequest): Promise<pb.Locations> {
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    req.records.forEach((r, i) => {
      if (!r.name) bag.add(i, 'name', MESSAGES.required);
      if (!r.type) bag.add(i, 'type', MESSAGES.required);
      else checkType(bag, i, r.type);
    });
    await checkUnique(
      db.locations,
      tenant,
      'name',
      req.records.map((r, index) => ({ index, value: r.name })),
      bag,
    );
    bag.throwIfAny();
  };
  const created = await insertValidated(db.locations, tenant, validate, () =>
    req.records.map((r) => ({ name: r.name!, name_lower: nameKey(r.name!), type: r.type as LocationType })),
  );
  return { records: created.map(toLocation), page: undefined };
}

export async function updateLocation(db: ReferenceDb, tenant: string, req: pb.UpdateLocationRequest): Promise<pb.Location> {
  const record = await findOwned(db.locations, tenant, req.id, 'location');
  const patch = req.patch ?? {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    checkType(bag, 0, patch.type);
    await checkUnique(db.locations, tenant, 'name', [{ index: 0, value: patch.name, selfId: record._id }], bag);
    bag.throwIfAny();
  };
  const set: Partial<LocationRecord> = {};
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  if (patch.type !== undefined) set.type = patch.type as LocationType;
  return toLocation(await updateValidated(db.locations, record, validate, set));
}
