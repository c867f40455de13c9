import type { Collection } from '@supply/kit';
import type { supply_reference_v1 } from '@supply/protos';
import type { UomRecord } from './repository';

export function toUom(r: UomRecord): supply_reference_v1.Uom {
  return { id: r._id, name: r.name, abbreviation: r.abbreviation, created_at: r.created_at, updated_at: r.updated_at };
}

/** One offset page in id order, with the total of all matches. */
export async function listUoms(
  uoms: Collection<UomRecord>,
  tenant: string,
  req: supply_reference_v1.ListUomsRequest,
): Promise<supply_reference_v1.ListUomsResponse> {
  const page = Math.max(1, req.page?.page || 1);
  const perPage = Math.max(1, req.page?.per_page || 25);
  const filter: Record<string, unknown> = { tenant };
  if (req.filter_name) filter.name_lower = req.filter_name.toLowerCase();
  const [records, total] = await Promise.all([
    uoms.find(filter, { sort: [['_id', 1]], skip: (page - 1) * perPage, limit: perPage }),
    uoms.count(filter),
  ]);
  return { uoms: records.map(toUom), page: { page, per_page: perPage, total } };
}

export async function seedUoms(uoms: Collection<UomRecord>, tenant: string): Promise<void> {
  const now = new Date().toISOString();
  for (const [name, abbreviation] of [['Each', 'ea'], ['Case', 'cs'], ['Kilogram', 'kg']] as const) {
    await uoms.bulkUpsert([
      { key: { tenant, name_lower: name.toLowerCase() }, set: {}, setOnInsert: { name, abbreviation, created_at: now, updated_at: now } },
    ]);
  }
}
