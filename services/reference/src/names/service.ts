import type { Collection } from '@supply/kit';
import type { supply_reference_v1 as pb } from '@supply/contracts';
import { assertBulkSize, byIds, findIn } from '../common/reads';
import { nameKey, type NamedRecord } from '../common/records';
import type { ReferenceDb } from '../db';
import { levelsOf } from '../hierarchy-levels/repository';
import { hierarchyColumns } from '../hierarchy-levels/values';

/** Ids parallel to `names` (0 where unknown) and the distinct unknown names in first-seen order. */
function parallelIds(names: readonly string[], idOf: (key: string) => number | undefined): pb.ResolvedNames {
  const ids = new Array<number>(names.length);
  const unknown = new Set<string>();
  names.forEach((name, i) => {
    const id = idOf(nameKey(name));
    ids[i] = id ?? 0;
    if (id === undefined) unknown.add(name);
  });
  return { ids, unknown: [...unknown] };
}

/** Resolves names of one kind with one store read, exactly but ignoring case. */
export async function resolveNamed<R extends NamedRecord>(
  collection: Collection<R>,
  tenant: string,
  names: readonly string[],
): Promise<pb.ResolvedNames> {
  const found = await findIn(collection, { tenant }, 'name_lower', names.map(nameKey));
  const idOf = new Map(found.map((r) => [r.name_lower, r._id]));
  return parallelIds(names, (key) => idOf.get(key));
}

/** Units of measure by name or abbreviation; a name match wins over another uom's abbreviation. */
export async function resolveUomNames(db: ReferenceDb, tenant: string, names: readonly string[]): Promise<pb.ResolvedNames> {
  const keys = names.map(nameKey);
  const [named, abbreviated] = await Promise.all([
    findIn(db.uoms, { tenant }, 'name_lower', keys),
    findIn(db.uoms, { tenant }, 'abbreviation_lower', keys),
  ]);
  const byName = new Map(named.map((u) => [u.name_lower, u._id]));
  const byAbbreviation = new Map(abbreviated.map((u) => [u.abbreviation_lower, u._id]));
  return parallelIds(names, (key) => byName.get(key) ?? byAbbreviation.get(key));
}

/** Every kind of name a sync row carries, resolved in one call per kind. */
export async function resolveNames(db: ReferenceDb, tenant: string, req: pb.ResolveNamesRequest): Promise<pb.ResolveNamesResponse> {
  assertBulkSize(
    req.items.length +
      req.customer_groups.length +
      req.sale_types.length +
      req.timing_intervals.length +
      req.uoms.length +
      req.locations.length,
    'names',
  );
  const [items, customer_groups, sale_types, timing_intervals, uoms, locations] = await Promise.all([
    resolveNamed(db.items, tenant, req.items),
    resolveNamed(db.customerGroups, tenant, req.customer_groups),
    resolveNamed(db.saleTypes, tenant, req.sale_types),
    resolveNamed(db.timingIntervals, tenant, req.timing_intervals),
    resolveUomNames(db, tenant, req.uoms),
    resolveNamed(db.locations, tenant, req.locations),
  ]);
  return { items, customer_groups, sale_types, timing_intervals, uoms, locations };
}

/** Names (and, when asked, hierarchy values) of records by id; unknown ids are left out. */
export async function lookupIds(db: ReferenceDb, tenant: string, req: pb.LookupIdsRequest): Promise<pb.LookupIdsResponse> {
  assertBulkSize(
    req.item_ids.length +
      req.customer_group_ids.length +
      req.sale_type_ids.length +
      req.timing_interval_ids.length +
      req.uom_ids.length +
      req.location_ids.length,
    'ids',
  );
  const named = async <R extends NamedRecord>(
    collection: Collection<R>,
    ids: number[],
    extra: (r: R) => Partial<pb.NamedRecord> = () => ({}),
  ) =>
    [...(await byIds(collection, tenant, ids)).values()]
      .sort((a, b) => a._id - b._id)
      .map((r): pb.NamedRecord => ({ id: r._id, name: r.name, hierarchy: [], abbreviation: '', uom_id: 0, ...extra(r) }));
  const [itemLevels, customerGroupLevels] = req.include_hierarchy
    ? await Promise.all([levelsOf(db.levels, tenant, 'item'), levelsOf(db.levels, tenant, 'customer_group')])
    : [[], []];
  const [items, customer_groups, sale_types, timing_intervals, uoms, locations] = await Promise.all([
    named(db.items, req.item_ids, (r) => ({
      uom_id: r.uom_id,
      hierarchy: req.include_hierarchy ? hierarchyColumns(r.hierarchy, itemLevels) : [],
    })),
    named(db.customerGroups, req.customer_group_ids, (r) => ({
      hierarchy: req.include_hierarchy ? hierarchyColumns(r.hierarchy, customerGroupLevels) : [],
    })),
    named(db.saleTypes, req.sale_type_ids),
    named(db.timingIntervals, req.timing_interval_ids),
    named(db.uoms, req.uom_ids, (r) => ({ abbreviation: r.abbreviation })),
    named(db.locations, req.location_ids),
  ]);
  return {
    items,
    customer_groups,
    sale_types,
    timing_intervals,
    uoms,
    locations,
    item_levels: itemLevels.map((l) => l.name),
    customer_group_levels: customerGroupLevels.map((l) => l.name),
  };
}
