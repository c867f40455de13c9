import type { supply_reference_v1 as pb } from '@supply/contracts';
import { assertBulkSize, byIds, distinct, findIn } from '../common/reads';
import type { ReferenceDb } from '../db';
import { toItemLocation } from '../item-locations/service';
import { resolveNamed } from '../names/service';
import { getView } from '../views/service';

/**
 * Planning parameters of many item-locations in one call, chosen by ids, by (item, location)
 * names and/or by a view, with the item's price and unit for the financial plan.
 */
export async function getPlanningParameters(
  db: ReferenceDb,
  tenant: string,
  req: pb.GetPlanningParametersRequest,
): Promise<pb.GetPlanningParametersResponse> {
  assertBulkSize(req.ids.length + req.names.length, 'item-locations');
  const wanted = [...req.ids];
  if (req.view_id || req.view_name)
    wanted.push(...(await getView(db, tenant, { id: req.view_id, name: req.view_name })).view!.item_location_ids);

  const unknown_names: pb.ItemLocationName[] = [];
  if (req.names.length > 0) {
    const [items, locations] = await Promise.all([
      resolveNamed(
        db.items,
        tenant,
        req.names.map((n) => n.item_name),
      ),
      resolveNamed(
        db.locations,
        tenant,
        req.names.map((n) => n.location_name),
      ),
    ]);
    const pairs = req.names.map((_, i) => ({ item_id: items.ids[i]!, location_id: locations.ids[i]! }));
    const known = pairs.filter((p) => p.item_id && p.location_id);
    const locationIds = distinct(known.map((p) => p.location_id));
    const found = await findIn(
      db.itemLocations,
      { tenant, location_id: { $in: locationIds } },
      'item_id',
      known.map((p) => p.item_id),
    );
    const idOf = new Map(found.map((r) => [`${r.item_id}:${r.location_id}`, r._id]));
    pairs.forEach((p, i) => {
      const id = idOf.get(`${p.item_id}:${p.location_id}`);
      if (id) wanted.push(id);
      else unknown_names.push(req.names[i]!);
    });
  }
  const ids = distinct(wanted);
  assertBulkSize(ids.length, 'item-locations');

  const records = await byIds(db.itemLocations, tenant, ids);
  const rows = [...records.values()].sort((a, b) => a._id - b._id);
  const [items, locations] = await Promise.all([
    byIds(
      db.items,
      tenant,
      rows.map((r) => r.item_id),
    ),
    byIds(
      db.locations,
      tenant,
      rows.map((r) => r.location_id),
    ),
  ]);
  const uoms = await byIds(
    db.uoms,
    tenant,
    [...items.values()].map((i) => i.uom_id),
  );
  return {
    records: rows.map((r) => {
      const item = items.get(r.item_id);
      return {
        item_location: toItemLocation(r, item?.name ?? '', locations.get(r.location_id)?.name ?? ''),
        unit_price: item?.unit_price ?? 0,
        uom: uoms.get(item?.uom_id ?? 0)?.name ?? '',
      };
    }),
    unknown_ids: ids.filter((id) => !records.has(id)),
    unknown_names,
  };
}
