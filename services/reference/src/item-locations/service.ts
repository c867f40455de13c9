import type { Filter } from '@supply/kit';
import type { supply_reference_v1 as pb } from '@supply/contracts';
import { FieldErrorBag, MESSAGES } from '../common/field-errors';
import { byIds, distinct, findIn, findOwned, offsetPage } from '../common/reads';
import { nameKey } from '../common/records';
import { insertValidated, updateValidated } from '../common/writes';
import type { ReferenceDb } from '../db';
import { resolveNamed } from '../names/service';
import { LOT_SIZING_RULES, PARAMETER_DEFAULTS, type ItemLocationRecord, type PlanningParameterFields } from './repository';

const PARAMETER_FIELDS = [...Object.keys(PARAMETER_DEFAULTS), 'unit_cost'] as Array<keyof PlanningParameterFields>;

export function toItemLocation(r: ItemLocationRecord, itemName: string, locationName: string): pb.ItemLocation {
  const { _id, tenant: _tenant, item_id, location_id, created_at, updated_at, ...parameters } = r;
  // Records stored before service levels existed have none.
  return {
    id: _id,
    item_id,
    item_name: itemName,
    location_id,
    location_name: locationName,
    ...parameters,
    service_level: r.service_level ?? 0,
    created_at,
    updated_at,
  };
}

export async function presentItemLocations(db: ReferenceDb, tenant: string, records: ItemLocationRecord[]): Promise<pb.ItemLocation[]> {
  if (records.length === 0) return [];
  const [items, locations] = await Promise.all([
    byIds(
      db.items,
      tenant,
      records.map((r) => r.item_id),
    ),
    byIds(
      db.locations,
      tenant,
      records.map((r) => r.location_id),
    ),
  ]);
  return records.map((r) => toItemLocation(r, items.get(r.item_id)?.name ?? '', locations.get(r.location_id)?.name ?? ''));
}

export async function listItemLocations(db: ReferenceDb, tenant: string, req: pb.ListRequest): Promise<pb.ItemLocations> {
  const filter: Filter = { tenant };
  // An unknown name matches nothing (id 0 is never assigned).
  if (req.filter_item_name) filter.item_id = (await db.items.findOne({ tenant, name_lower: nameKey(req.filter_item_name) }))?._id ?? 0;
  if (req.filter_location_name) {
    filter.location_id = (await db.locations.findOne({ tenant, name_lower: nameKey(req.filter_location_name) }))?._id ?? 0;
  }
  return offsetPage(db.itemLocations, filter, req.page, (rs) => presentItemLocations(db, tenant, rs));
}

export async function getItemLocation(db: ReferenceDb, tenant: string, id: number): Promise<pb.ItemLocation> {
  return (await presentItemLocations(db, tenant, [await findOwned(db.itemLocations, tenant, id, 'item-location')]))[0]!;
}

/** The parameters the input names, leaving the others out. */
function writtenParameters(input: pb.ItemLocationInput): Partial<PlanningParameterFields> {
  const out: Record<string, unknown> = {};
  for (const field of PARAMETER_FIELDS) if (input[field] !== undefined) out[field] = input[field];
  return out as Partial<PlanningParameterFields>;
}

/** Rules that tie parameters together, checked on the record as it will be stored. */
function checkParameters(bag: FieldErrorBag, i: number, p: PlanningParameterFields): void {
  if (!(LOT_SIZING_RULES as readonly string[]).includes(p.lot_sizing_rule)) {
    bag.add(i, 'lot_sizing_rule', MESSAGES.exists);
    return;
  }
  const requiredWhen = (field: keyof PlanningParameterFields, why = `lot sizing rule is ${p.lot_sizing_rule}`) =>
    bag.add(i, field, `The :attribute field must be greater than 0 when ${why}.`);
  if (p.lot_sizing_rule === 'fixed_order_quantity' && !(p.fixed_order_qty > 0)) requiredWhen('fixed_order_qty');
  const needsEoq =
    p.lot_sizing_rule === 'economic_order_quantity' || (p.lot_sizing_rule === 'period_order_quantity' && !p.periods_of_supply);
  if (needsEoq) {
    const why =
      p.lot_sizing_rule === 'economic_order_quantity' ? undefined : 'lot sizing rule is period_order_quantity without periods_of_supply';
    if (!(p.ordering_cost > 0)) requiredWhen('ordering_cost', why);
    if (!(p.unit_cost > 0)) requiredWhen('unit_cost', why);
    if (!(p.holding_rate > 0)) requiredWhen('holding_rate', why);
  }
  // Records stored before service levels existed have none (0).
  const level = p.service_level ?? 0;
  if (!(level >= 0 && level < 1)) bag.add(i, 'service_level', 'The :attribute field must be 0 (none) or greater than 0 and less than 1.');
  if (p.max_order_qty > 0 && p.max_order_qty < p.min_order_qty) {
    bag.add(i, 'max_order_qty', 'The :attribute field must be 0 (no maximum) or at least the min order qty.');
  }
}

interface Target {
  index: number;
  item_id: number;
  location_id: number;
  selfId?: number;
}

/** An item is stocked once per location: pairs repeated in the batch or already present are errors. */
async function checkPairsFree(db: ReferenceDb, tenant: string, targets: Target[], bag: FieldErrorBag): Promise<void> {
  const key = (t: { item_id: number; location_id: number }) => `${t.item_id}:${t.location_id}`;
  const seen = new Set<string>();
  for (const t of targets) {
    if (seen.has(key(t))) bag.add(t.index, 'location_name', MESSAGES.distinct);
    seen.add(key(t));
  }
  if (targets.length === 0) return;
  const locationIds = distinct(targets.map((t) => t.location_id));
  const existing = await findIn(
    db.itemLocations,
    { tenant, location_id: { $in: locationIds } },
    'item_id',
    targets.map((t) => t.item_id),
  );
  const holders = new Map(existing.map((r) => [key(r), r._id]));
  for (const t of targets) {
    const holder = holders.get(key(t));
    if (holder !== undefined && holder !== t.selfId) bag.add(t.index, 'location_name', 'The item is already stocked at this :attribute.');
  }
}

export async function createItemLocations(db: ReferenceDb, tenant: string, req: pb.CreateItemLocationsRequest): Promise<pb.ItemLocations> {
  let rows: Array<Omit<ItemLocationRecord, '_id' | 'tenant' | 'created_at' | 'updated_at'>> = [];
  const validate = async () => {
    const bag = new FieldErrorBag(req.array_body);
    const [itemIds, locationIds] = await Promise.all([
      resolveNamed(
        db.items,
        tenant,
        req.records.map((r) => r.item_name ?? ''),
      ),
      resolveNamed(
        db.locations,
        tenant,
        req.records.map((r) => r.location_name ?? ''),
      ),
    ]);
    const items = await byIds(db.items, tenant, itemIds.ids.filter(Boolean));
    const targets: Target[] = [];
    rows = req.records.map((r, i) => {
      const item_id = itemIds.ids[i]!;
      const location_id = locationIds.ids[i]!;
      if (!r.item_name) bag.add(i, 'item_name', MESSAGES.required);
      else if (!item_id) bag.add(i, 'item_name', MESSAGES.exists);
      if (!r.location_name) bag.add(i, 'location_name', MESSAGES.required);
      else if (!location_id) bag.add(i, 'location_name', MESSAGES.exists);
      if (item_id && location_id) targets.push({ index: i, item_id, location_id });
      const parameters = { ...PARAMETER_DEFAULTS, unit_cost: items.get(item_id)?.unit_cost ?? 0, ...writtenParameters(r) };
      checkParameters(bag, i, parameters);
      return { item_id, location_id, ...parameters };
    });
    await checkPairsFree(db, tenant, targets, bag);
    bag.throwIfAny();
  };
  const created = await insertValidated(db.itemLocations, tenant, validate, () => rows);
  return { records: await presentItemLocations(db, tenant, created), page: undefined };
}

export async function updateItemLocation(db: ReferenceDb, tenant: string, req: pb.UpdateItemLocationRequest): Promise<pb.ItemLocation> {
  const record = await findOwned(db.itemLocations, tenant, req.id, 'item-location');
  const patch = req.patch ?? {};
  const set: Partial<ItemLocationRecord> = writtenParameters(patch);
  const validate = async () => {
    const bag = new FieldErrorBag(false);
    if (patch.item_name !== undefined) {
      const [id] = (await resolveNamed(db.items, tenant, [patch.item_name])).ids;
      if (id) set.item_id = id;
      else bag.add(0, 'item_name', MESSAGES.exists);
    }
    if (patch.location_name !== undefined) {
      const [id] = (await resolveNamed(db.locations, tenant, [patch.location_name])).ids;
      if (id) set.location_id = id;
      else bag.add(0, 'location_name', MESSAGES.exists);
    }
    const merged = { ...record, ...set };
    checkParameters(bag, 0, merged);
    if (set.item_id !== undefined || set.location_id !== undefined) {
      await checkPairsFree(db, tenant, [{ index: 0, item_id: merged.item_id, location_id: merged.location_id, selfId: record._id }], bag);
    }
    bag.throwIfAny();
  };
  const updated = await updateValidated(db.itemLocations, record, validate, set);
  return (await presentItemLocations(db, tenant, [updated]))[0]!;
}
