/**
 * The cursor-page contract of every transactional read: API sort names to stored fields,
 * the id tie-break, positions as JSON arrays of sort values, and `PageInfo`.
 */
import { AppError, ValidationError, type Collection, type Doc } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { keysetPage, positionOf, type KeysetQuery, type Scalar, type SortKey } from './keyset';
import { FieldCheck, MAX_PER_PAGE, nameKey } from './records';

export interface SortField {
  /** Stored field the API name sorts by. */
  field: string;
  type: 'string' | 'number';
}

/** What a resource lets a cursor read sort by, and which list filters a query may split. */
export interface PageSpec {
  sorts: Record<string, SortField>;
  fanOut: readonly string[];
}

const ID: SortField = { field: '_id', type: 'number' };

/**
 * The requested keys, then `_id` in the direction of the last key (so a sort and its exact
 * reverse are one index scan). Keys after `id` cannot change the order and are dropped.
 */
export function effectiveSort(spec: PageSpec, requested: readonly pb.SortKey[]): Array<SortKey & { type: SortField['type'] }> {
  const out: Array<SortKey & { type: SortField['type'] }> = [];
  const seen = new Set<string>();
  for (const { field: name, descending } of requested) {
    const sortField = name === 'id' ? ID : spec.sorts[name];
    if (!sortField) {
      const allowed = ['id', ...Object.keys(spec.sorts)].join(', ');
      throw new AppError('invalid_query', `Unknown sort ${name}; allowed: ${allowed}.`, { problem: 'invalid-query' });
    }
    if (seen.has(name)) throw new ValidationError({ sort: [`The sort field names ${name} more than once.`] });
    seen.add(name);
    out.push({ ...sortField, direction: descending ? -1 : 1 });
    if (sortField === ID) return out;
  }
  out.push({ ...ID, direction: out.length > 0 ? out[out.length - 1]!.direction : 1 });
  return out;
}

function perPageOf(page: pb.PageRequest): number {
  const perPage = page.per_page || 100;
  if (!Number.isSafeInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    throw new ValidationError({ per_page: [`The per page field must be between 1 and ${MAX_PER_PAGE}.`] });
  }
  return perPage;
}

/** A position this service wrote: one value per sort key, of the key's type. */
function parsePosition(after: string, sort: ReadonlyArray<{ type: SortField['type'] }>): Scalar[] {
  let values: unknown;
  try {
    values = JSON.parse(after);
  } catch {
    values = undefined;
  }
  const valid = Array.isArray(values) && values.length === sort.length && values.every((value, i) => typeof value === sort[i]!.type);
  if (!valid) throw new ValidationError({ cursor: ['The cursor is invalid.'] });
  return values as Scalar[];
}

/** One keyset page of `collection` for `page`, with the positions of its ends. */
export async function readPage<T extends Doc>(
  collection: Collection<T>,
  spec: PageSpec,
  conditions: Pick<KeysetQuery, 'equals' | 'ranges'>,
  page: pb.PageRequest | undefined,
): Promise<{ records: T[]; page: pb.PageInfo }> {
  const request = page ?? { per_page: 0, sort: [], after: '', backward: false };
  const sort = effectiveSort(spec, request.sort);
  const result = await keysetPage(collection, {
    ...conditions,
    sort,
    limit: perPageOf(request),
    after: request.after ? parsePosition(request.after, sort) : undefined,
    backward: request.backward,
    fanOut: spec.fanOut,
  });
  const first = result.records[0];
  const last = result.records[result.records.length - 1];
  return {
    records: result.records,
    page: {
      has_more: result.hasMore,
      first_position: first ? JSON.stringify(positionOf(first, sort)) : '',
      last_position: last ? JSON.stringify(positionOf(last, sort)) : '',
    },
  };
}

/** An inclusive date range filter: `filter[<from>]`, `filter[<to>]` on a stored date field. */
export interface DateRange {
  field: string;
  from: string;
  to: string;
  /** API names, for field errors. */
  names: readonly [from: string, to: string];
}

/**
 * Store conditions for the tenant, name lists ("any of", matched ignoring case on the
 * stored lowercased field; empty lists filter nothing) and a date range (real dates,
 * `from <= to`, else field errors).
 */
export function conditionsOf(
  tenant: string,
  names: Record<string, readonly string[] | undefined>,
  range?: DateRange,
): Pick<KeysetQuery, 'equals' | 'ranges'> {
  const equals: KeysetQuery['equals'] = { tenant: [tenant] };
  for (const [field, list] of Object.entries(names)) {
    const keys = [...new Set((list ?? []).map(nameKey))];
    if (keys.length > 0) equals[field] = keys;
  }
  if (!range || (!range.from && !range.to)) return { equals };
  const check = new FieldCheck();
  const [fromName, toName] = range.names.map((name) => `filter.${name}`) as [string, string];
  check.date(fromName, range.from, false);
  check.date(toName, range.to, false);
  if (range.from && range.to && range.to < range.from)
    check.add(toName, `The ${toName} field must be a date after or equal to ${fromName}.`);
  check.done();
  return { equals, ranges: { [range.field]: { ...(range.from ? { from: range.from } : {}), ...(range.to ? { to: range.to } : {}) } } };
}
