import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { findOwned, nameFilter, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { checkUnique } from '../common/unique';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import { LEVEL_KINDS, type HierarchyLevelRecord, type LevelKind } from './repository';

/** More levels than this per kind would be a modelling mistake, not a hierarchy. */
export const MAX_LEVELS_PER_KIND = 10;

/** Fields of the legacy sales record that a level name must not shadow. */
const RESERVED_NAMES = new Set([
  'id',
  'sell_date',
  'quantity',
  'created_at',
  'updated_at',
  'item_name',
  'customer_group_name',
  'timing_interval_span',
  'sale_type_name',
  'uom_abbr',
  'uom',
]);

export function toHierarchyLevel(r: HierarchyLevelRecord): pb.HierarchyLevel {
  return { id: r._id, kind: r.kind, name: r.name, position: r.position, created_at: r.created_at, updated_at: r.updated_at };
}

export async function listHierarchyLevels(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.HierarchyLevels> {
  return offsetPage(db.levels, nameFilter(tenant, req.filter_name), req.page, (rs) => rs.map(toHierarchyLevel));
}

export async function getHierarchyLevel(db: ReferenceDb, tenant: string, id: number): Promise<pb.HierarchyLevel> {
  return toHierarchyLevel(await findOwned(db.levels, tenant, id, 'hierarchy level'));
}

function checkName(bag: FieldErrorBag, index: number, name: string | undefined): void {
  if (name !== undefined && RESERVED_NAMES.has(nameKey(name))) {
    bag.add(index, 'name', 'The :attribute must not be a field name of the sales record.');
  }
}

export async function createHierarchyLevels(
  db: ReferenceDb,
  tenant: string,
  req: pb.CreateHierarchyLevelsRequest,
): Promise<pb.HierarchyLevels> {
  const positions = new Map<LevelKind, number>();
  const counts = new Map<LevelKind, number>();
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    const existing = await db.levels.find({ tenant }, { sort: [['_id', 1]] });
    for (const kind of LEVEL_KINDS) {
      const ofKind = existing.filter((l) => l.kind === kind);
      positions.set(kind, Math.max(0, ...ofKind.map((l) => l.position)));
      counts.set(kind, ofKind.length);
    }
    req.records.forEach((r, i) => {
      if (!r.name) bag.add(i, 'name', MESSAGES.required);
      if (!r.kind || !(LEVEL_KINDS as readonly string[]).includes(r.kind)) bag.add(i, 'kind', MESSAGES.exists);
      else {
        const kind = r.kind as LevelKind;
        counts.set(kind, counts.get(kind)! + 1);
        if (counts.get(kind)! > MAX_LEVELS_PER_KIND)
          bag.add(i, 'kind', `A tenant has at most ${MAX_LEVELS_PER_KIND} ${kind} hierarchy levels.`);
      }
      checkName(bag, i, r.name);
    });
    await checkUnique(
      db.levels,
      tenant,
      'name',
      req.records.map((r, index) => ({ index, value: r.name })),
      bag,
    );
    bag.throwIfAny();
  };
  const created = await insertValidated(db.levels, tenant, validate, () =>
    req.records.map((r) => {
      const kind = r.kind as LevelKind;
      const position = r.position ?? positions.get(kind)! + 1;
      positions.set(kind, Math.max(positions.get(kind)!, position));
      return { kind, name: r.name!, name_lower: nameKey(r.name!), position };
    }),
  );
  return { records: created.map(toHierarchyLevel), page: undefined };
}

export async function updateHierarchyLevel(
  db: ReferenceDb,
  tenant: string,
  req: pb.UpdateHierarchyLevelRequest,
): Promise<pb.HierarchyLevel> {
  const record = await findOwned(db.levels, tenant, req.id, 'hierarchy level');
  const patch = req.patch ?? {};
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    if (patch.kind !== undefined && patch.kind !== record.kind) bag.add(0, 'kind', 'The :attribute of a hierarchy level cannot change.');
    checkName(bag, 0, patch.name);
    await checkUnique(db.levels, tenant, 'name', [{ index: 0, value: patch.name, selfId: record._id }], bag);
    bag.throwIfAny();
  };
  const set: Partial<HierarchyLevelRecord> = {};
  if (patch.name !== undefined) Object.assign(set, { name: patch.name, name_lower: nameKey(patch.name) });
  if (patch.position !== undefined) set.position = patch.position;
  return toHierarchyLevel(await updateValidated(db.levels, record, validate, set));
}
