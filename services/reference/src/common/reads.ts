import { AppError, NotFoundError, type Collection, type Filter } from '@supply/kit';
import type { supply_reference_v1 } from '@supply/contracts';
import { MAX_BULK, nameKey, type TenantRecord } from './records';

/** The gateway enforces each endpoint's own maximum; this only protects the service. */
const MAX_PER_PAGE = 1000;

/** One offset page of a tenant's records in id order, with the total of all matches. */
export async function offsetPage<R extends TenantRecord, M>(
  collection: Collection<R>,
  filter: Filter,
  requested: supply_reference_v1.OffsetPage | undefined,
  present: (records: R[]) => Promise<M[]> | M[],
): Promise<{ records: M[]; page: supply_reference_v1.OffsetPage }> {
  const page = Math.max(1, requested?.page || 1);
  const perPage = Math.min(MAX_PER_PAGE, Math.max(1, requested?.per_page || 25));
  const skip = (page - 1) * perPage;
  const records = await collection.find(filter, { sort: [['_id', 1]], skip, limit: perPage });
  // A page short of full is the last one, so it tells the total itself (so does an empty first
  // page); only a full page, or an empty one past the end, needs the count, a second scan (a
  // second round trip on MongoDB). Most reference lists fit on their first page.
  const partial = records.length < perPage && (records.length > 0 || skip === 0);
  const total = partial ? skip + records.length : await collection.count(filter);
  return { records: await present(records), page: { page, per_page: perPage, total } };
}

/** Refuses an internal bulk call above MAX_BULK entries in all. */
export function assertBulkSize(count: number, what: string): void {
  if (count > MAX_BULK) {
    throw new AppError('invalid_argument', `At most ${MAX_BULK} ${what} per call (got ${count}); send them in chunks.`);
  }
}

/** Distinct values, first-seen order. */
export function distinct<T>(values: Iterable<T>): T[] {
  return [...new Set(values)];
}

/** A tenant's record by id; another tenant's id is as unknown as a missing one. */
export async function findOwned<R extends TenantRecord>(collection: Collection<R>, tenant: string, id: number, label: string): Promise<R> {
  const record = Number.isSafeInteger(id) && id > 0 ? await collection.findOne({ _id: id, tenant }) : null;
  if (!record) throw new NotFoundError(`No ${label} with id ${id}.`);
  return record;
}

/**
 * The embedded store seeks its index once per `$in` value up to 256 values and scans the
 * collection beyond that, so long key lists are read in slices of this size.
 */
const IN_SLICE = 256;

/** Records matching `filter` whose `field` is one of `values` (any number of them). */
export async function findIn<R extends TenantRecord>(
  collection: Collection<R>,
  filter: Filter,
  field: string,
  values: Iterable<unknown>,
): Promise<R[]> {
  const wanted = distinct(values);
  const slices = Array.from({ length: Math.ceil(wanted.length / IN_SLICE) }, (_, i) => wanted.slice(i * IN_SLICE, (i + 1) * IN_SLICE));
  return (await Promise.all(slices.map((slice) => collection.find({ ...filter, [field]: { $in: slice } })))).flat();
}

/** Records of the tenant with these ids, by id. */
export async function byIds<R extends TenantRecord>(
  collection: Collection<R>,
  tenant: string,
  ids: Iterable<number>,
): Promise<Map<number, R>> {
  const found = await findIn(collection, { tenant }, '_id', ids);
  return new Map(found.map((r) => [r._id, r]));
}

/** The tenant's records, optionally only the one whose name matches (ignoring case). */
export function nameFilter(tenant: string, name: string): Filter {
  return name ? { tenant, name_lower: nameKey(name) } : { tenant };
}
