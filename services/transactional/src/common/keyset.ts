/**
 * Keyset pages over a store collection. A page is "the next `limit` records after this
 * position in this order": one store query whose filter says `(k1, k2, ..., _id) > position`
 * as the `$or` the store's planner turns into a single index range, so a page deep in the
 * walk costs what the first page costs whenever an index leads with the equality fields
 * and continues with the sort keys (declare such indexes; an unserved order stays correct
 * but is sorted in memory).
 *
 * Two refinements keep pages on one index range:
 * - Sort keys pinned to one value by the filter drop out of the keyset condition (they
 *   cannot differ between records), so `item = a` with sort `item, date` seeks inside `a`.
 * - A list filter on a field that leads an index (`item IN (a, b)`) is split into one query
 *   per value, each a single range, and the pages are merged in sort order.
 */
import type { Collection, Doc, Filter, Sort } from '@supply/kit';

export type Scalar = string | number | null;

export interface SortKey {
  /** Stored field. */
  field: string;
  direction: 1 | -1;
}

export interface KeysetQuery {
  /** Equality conditions, stored field -> allowed values (any of); always includes `tenant`. */
  equals: Record<string, readonly Scalar[]>;
  /** Inclusive bounds on stored fields (never fields of `equals`). */
  ranges?: Record<string, { from?: Scalar; to?: Scalar; before?: Scalar }>;
  /** A total order: the last key is `_id`. */
  sort: readonly SortKey[];
  limit: number;
  /** The sort values of the record the page starts after (exclusive). */
  after?: readonly Scalar[];
  /** The `limit` records just before `after`, returned in sort order. */
  backward?: boolean;
  /** Fields an index leads with (after `tenant`): a list filter on one of them is split per value. */
  fanOut?: readonly string[];
}

export interface KeysetPage<T> {
  records: T[];
  /** More records beyond the page in the walking direction. */
  hasMore: boolean;
}

/** Most store queries one split list filter may cost per page; longer lists filter in the store instead. */
export const MAX_FAN_OUT = 8;

/** Ordering as the store sorts scalars: null < numbers < strings (by UTF-8 bytes). */
export function compareScalars(a: Scalar, b: Scalar): number {
  if (a === b) return 0;
  const rank = (v: Scalar) => (v === null ? 0 : typeof v === 'number' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number') return a < (b as number) ? -1 : 1;
  return Buffer.compare(Buffer.from(a as string), Buffer.from(b as string));
}

export function compareBySort(a: Doc, b: Doc, sort: readonly SortKey[]): number {
  for (const { field, direction } of sort) {
    const order = compareScalars(a[field] as Scalar, b[field] as Scalar) * direction;
    if (order !== 0) return order;
  }
  return 0;
}

/** The position of a record: its values of the sort keys. */
export function positionOf(record: Doc, sort: readonly SortKey[]): Scalar[] {
  return sort.map(({ field }) => (record[field] ?? null) as Scalar);
}

export async function keysetPage<T extends Doc>(collection: Collection<T>, query: KeysetQuery): Promise<KeysetPage<T>> {
  const scan: SortKey[] = query.backward
    ? query.sort.map(({ field, direction }) => ({ field, direction: (direction * -1) as 1 | -1 }))
    : [...query.sort];
  const storeSort: Sort = scan.map(({ field, direction }) => [field, direction] as const);
  const take = query.limit + 1;
  const branches = splitEquals(query.equals, query.fanOut ?? []);
  const pages = await Promise.all(
    branches.map((equals) => {
      const keyset = query.after ? keysetCondition(scan, query.after, pinnedValues(equals)) : true;
      if (keyset === false) return [] as T[];
      return collection.find(storeFilter(equals, query.ranges ?? {}, keyset), { sort: storeSort, limit: take });
    }),
  );
  const merged =
    pages.length === 1
      ? pages[0]!
      : pages
          .flat()
          .sort((a, b) => compareBySort(a, b, scan))
          .slice(0, take);
  const records = merged.slice(0, query.limit);
  if (query.backward) records.reverse();
  return { records, hasMore: merged.length > query.limit };
}

/** One equality map per value of the first splittable list filter (or the map itself). */
function splitEquals(equals: KeysetQuery['equals'], fanOut: readonly string[]): Array<KeysetQuery['equals']> {
  const field = fanOut.find((candidate) => {
    const values = equals[candidate];
    return values !== undefined && values.length > 1 && values.length <= MAX_FAN_OUT;
  });
  if (!field) return [equals];
  return equals[field]!.map((value) => ({ ...equals, [field]: [value] }));
}

function pinnedValues(equals: KeysetQuery['equals']): Map<string, Scalar> {
  const pinned = new Map<string, Scalar>();
  for (const [field, values] of Object.entries(equals)) if (values.length === 1) pinned.set(field, values[0]!);
  return pinned;
}

/**
 * `(k1..kn) > after` in scan order as disjuncts `k1 > a1`, `k1 = a1 and k2 > a2`, ...,
 * simplified by the pinned fields: `true` when every record of the branch qualifies,
 * `false` when none does.
 */
export function keysetCondition(
  scan: readonly SortKey[],
  after: readonly Scalar[],
  pinned: ReadonlyMap<string, Scalar>,
): Filter[] | boolean {
  const disjuncts: Filter[] = [];
  for (let i = 0; i < scan.length; i++) {
    const conditions: Filter = {};
    let possible = true;
    for (let j = 0; j < i && possible; j++) {
      const { field } = scan[j]!;
      if (pinned.has(field)) possible = compareScalars(pinned.get(field)!, after[j]!) === 0;
      else conditions[field] = after[j];
    }
    if (!possible) continue;
    const { field, direction } = scan[i]!;
    if (pinned.has(field)) {
      if (compareScalars(pinned.get(field)!, after[i]!) * direction <= 0) continue;
      if (Object.keys(conditions).length === 0) return true;
      disjuncts.push(conditions);
      continue;
    }
    conditions[field] = { [direction === 1 ? '$gt' : '$lt']: after[i] };
    disjuncts.push(conditions);
  }
  return disjuncts.length === 0 ? false : disjuncts;
}

function storeFilter(equals: KeysetQuery['equals'], ranges: NonNullable<KeysetQuery['ranges']>, keyset: Filter[] | true): Filter {
  const filter: Filter = {};
  for (const [field, values] of Object.entries(equals)) filter[field] = values.length === 1 ? values[0] : { $in: [...values] };
  for (const [field, { from, to, before }] of Object.entries(ranges)) {
    const bounds: Record<string, Scalar> = {};
    if (from !== undefined) bounds['$gte'] = from;
    if (to !== undefined) bounds['$lte'] = to;
    if (before !== undefined) bounds['$lt'] = before;
    if (Object.keys(bounds).length > 0) filter[field] = bounds;
  }
  if (keyset === true) return filter;
  // A single disjunct may bound a field the ranges bound too, so it joins through $and.
  if (keyset.length === 1) return { $and: [filter, keyset[0]!] };
  return { ...filter, $or: keyset };
}
