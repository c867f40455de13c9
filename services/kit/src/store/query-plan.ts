/**
 * The embedded store's query planner. It turns a filter and a sort into key ranges on
 * one index, so reads seek and scan in order instead of reading the whole collection:
 *
 * - Equality (`v`, `$eq`, `$in` of scalars) on an index's leading fields becomes a key
 *   prefix; `$in` fans out into one range per value (merged back into sort order).
 * - `$gt/$gte/$lt/$lte` on the next field narrows that range, bracketed by type as
 *   MongoDB does (`$gt: 5` never reaches strings).
 * - A top-level `$or` whose branches each bound the same index (the keyset idiom
 *   `{$or: [{d: {$gt: x}}, {d: x, _id: {$gt: y}}]}`) scans the hull of the branch ranges.
 * - The sort is "served" when the index fields after the equality prefix are the sort
 *   keys in order, all in the index direction or all reversed; keys on fields pinned by
 *   equality are ignored, and once `_id` or a whole unique index is consumed the order is total.
 *
 * Candidates rank by bound fields, then served sort, then the primary key first.
 * The planner only narrows: the caller still applies the whole filter to every document.
 */
import type { Filter, Sort } from './store';
import { AFTER_PREFIX, encodeValue, isScalar, KeyBuilder, rankOf } from './keys';

export type Scalar = string | number | boolean | null;

export interface PlannableIndex {
  /** `_id_` for the primary key. */
  name: string;
  fields: ReadonlyArray<{ path: string; direction: 1 | -1 }>;
  unique: boolean;
  /** The document table itself, keyed by `_id`. */
  primary: boolean;
  /** Bytes every entry of this index starts with. */
  prefix: Buffer;
  /** Non-unique entries end with the ascending `_id`, a hidden last field. */
  idTail: boolean;
}

/** Half-open byte range `[start, end)` of raw keys. */
export interface KeyRange {
  start: Buffer;
  end: Buffer;
}

export interface QueryPlan {
  index: PlannableIndex;
  /** Ascending and disjoint. */
  ranges: KeyRange[];
  /** Scan every range backwards (and the ranges in reverse order). */
  reverse: boolean;
  /** Scanning yields the requested order (ranges merged by the sort when there are several). */
  sortServed: boolean;
  /** The ranges are exactly the filter: counting keys counts matches. */
  covered: boolean;
  /** Fields narrowed by the ranges, the planner's first ranking criterion. */
  boundFields: number;
}

/** Caps the `$in` fan-out; beyond it the field is left to the residual filter. */
export const MAX_RANGES = 256;

interface Bound {
  encoded: Buffer;
  rank: number;
  inclusive: boolean;
}

interface FieldBounds {
  /** Allowed values, ascending by encoding, deduplicated; empty means nothing matches. */
  equals?: Scalar[];
  lower?: Bound;
  upper?: Bound;
  /** Every condition on this path is expressed by `equals` or the bounds. */
  exact: boolean;
}

interface FilterShape {
  fields: Map<string, FieldBounds>;
  /** `$or` groups found at the top level or inside `$and`; each is a list of branches. */
  orGroups: Filter[][];
  /** Nothing but plannable field conditions (no `$or`, `$nor`, or unknown shapes). */
  exact: boolean;
}

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte']);

export function analyzeFilter(filters: readonly Filter[], skipOr = false): FilterShape {
  const shape: FilterShape = { fields: new Map(), orGroups: [], exact: true };
  const visit = (filter: Filter): void => {
    for (const [key, condition] of Object.entries(filter)) {
      if (key === '$and' && Array.isArray(condition)) {
        for (const part of condition) visit(part as Filter);
      } else if (key === '$or' && Array.isArray(condition)) {
        shape.exact = false;
        if (!skipOr) shape.orGroups.push(condition as Filter[]);
      } else if (key.startsWith('$')) {
        shape.exact = false;
      } else {
        addCondition(shape, key, condition);
      }
    }
  };
  for (const filter of filters) visit(filter);
  return shape;
}

function fieldBounds(shape: FilterShape, path: string): FieldBounds {
  let bounds = shape.fields.get(path);
  if (!bounds) {
    bounds = { exact: true };
    shape.fields.set(path, bounds);
  }
  return bounds;
}

function addCondition(shape: FilterShape, path: string, condition: unknown): void {
  const bounds = fieldBounds(shape, path);
  if (isScalar(condition)) {
    addEquals(bounds, [condition]);
    return;
  }
  if (!isOperatorObject(condition)) {
    bounds.exact = false;
    return;
  }
  for (const [operator, operand] of Object.entries(condition)) {
    if (operator === '$eq' && isScalar(operand)) {
      addEquals(bounds, [operand]);
    } else if (operator === '$in' && Array.isArray(operand) && operand.every(isScalar)) {
      addEquals(bounds, operand as Scalar[]);
    } else if (RANGE_OPERATORS.has(operator) && isScalar(operand)) {
      addRange(bounds, operator, operand);
    } else {
      bounds.exact = false;
    }
  }
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

function addEquals(bounds: FieldBounds, values: readonly Scalar[]): void {
  const byEncoding = new Map<string, Scalar>();
  for (const value of values) byEncoding.set(encodeValue(value).toString('latin1'), value);
  if (bounds.equals) {
    const previous = new Set(bounds.equals.map((value) => encodeValue(value).toString('latin1')));
    for (const encoding of [...byEncoding.keys()]) if (!previous.has(encoding)) byEncoding.delete(encoding);
  }
  bounds.equals = [...byEncoding.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, value]) => value);
}

function addRange(bounds: FieldBounds, operator: string, operand: Scalar): void {
  if (operand === null) {
    // Only null and missing live in null's type bracket: `$gte`/`$lte` null mean `== null`.
    if (operator === '$gte' || operator === '$lte') addEquals(bounds, [null]);
    else bounds.exact = false;
    return;
  }
  const bound: Bound = { encoded: encodeValue(operand), rank: rankOf(operand), inclusive: operator === '$gte' || operator === '$lte' };
  if (operator === '$gt' || operator === '$gte') {
    const current = bounds.lower;
    const order = current ? Buffer.compare(bound.encoded, current.encoded) : 1;
    if (!current || order > 0 || (order === 0 && !bound.inclusive)) bounds.lower = bound;
  } else {
    const current = bounds.upper;
    const order = current ? Buffer.compare(bound.encoded, current.encoded) : -1;
    if (!current || order < 0 || (order === 0 && !bound.inclusive)) bounds.upper = bound;
  }
}

interface IndexRanges {
  ranges: KeyRange[];
  /** Leading index fields pinned by equality. */
  equalityFields: number;
  rangeUsed: boolean;
}

function prefixRange(prefix: Buffer): KeyRange {
  return { start: prefix, end: Buffer.concat([prefix, Buffer.from([AFTER_PREFIX])]) };
}

function rangesFor(index: PlannableIndex, shape: FilterShape): IndexRanges {
  let prefixes: Buffer[] = [index.prefix];
  let position = 0;
  for (; position < index.fields.length; position++) {
    const field = index.fields[position]!;
    const equals = shape.fields.get(field.path)?.equals;
    if (!equals) break;
    if (equals.length === 0) return { ranges: [], equalityFields: position + 1, rangeUsed: false };
    if (prefixes.length * equals.length > MAX_RANGES) break;
    prefixes = prefixes.flatMap((prefix) => equals.map((value) => KeyBuilder.from(prefix).value(value, field.direction).toBuffer()));
  }
  const next = position < index.fields.length ? index.fields[position]! : undefined;
  const bounds = next ? shape.fields.get(next.path) : undefined;
  if (!next || !bounds || bounds.equals || (!bounds.lower && !bounds.upper)) {
    return { ranges: prefixes.map(prefixRange).sort(compareRanges), equalityFields: position, rangeUsed: false };
  }
  const ranges = prefixes
    .map((prefix) => boundedRange(prefix, bounds, next.direction))
    .filter((range) => Buffer.compare(range.start, range.end) < 0)
    .sort(compareRanges);
  return { ranges, equalityFields: position, rangeUsed: true };
}

function compareRanges(a: KeyRange, b: KeyRange): number {
  return Buffer.compare(a.start, b.start);
}

function boundedRange(prefix: Buffer, bounds: FieldBounds, direction: 1 | -1): KeyRange {
  const { lower, upper } = bounds;
  if (lower && upper && lower.rank !== upper.rank) return { start: prefix, end: prefix };
  const key = (...parts: Array<Buffer | number[]>) => Buffer.concat([prefix, ...parts.map((part) => Buffer.from(part))]);
  if (direction === 1) {
    const start = lower ? key(lower.encoded, lower.inclusive ? [] : [AFTER_PREFIX]) : key([upper!.rank]);
    const end = upper ? key(upper.encoded, upper.inclusive ? [AFTER_PREFIX] : []) : key([lower!.rank + 1]);
    return { start, end };
  }
  const invert = (bytes: Buffer) => Buffer.from(bytes.map((byte) => ~byte & 0xff));
  const start = upper ? key(invert(upper.encoded), upper.inclusive ? [] : [AFTER_PREFIX]) : key([~lower!.rank & 0xff]);
  const end = lower ? key(invert(lower.encoded), lower.inclusive ? [AFTER_PREFIX] : []) : key([(~upper!.rank & 0xff) + 1]);
  return { start, end };
}

/** Whether scanning from `equalityFields` on yields `sort`, and in which direction. */
export function sortOrder(
  index: PlannableIndex,
  equalityFields: number,
  sort: Sort,
  pinnedFields: ReadonlySet<string>,
): { served: boolean; reverse: boolean } {
  const prefixFields = new Set(index.fields.slice(0, equalityFields).map((field) => field.path));
  const totalBefore = index.fields.slice(0, equalityFields).some((field) => field.path === '_id');
  let sign = 0;
  let position = equalityFields;
  if (!totalBefore) {
    for (const [path, direction] of sort) {
      if (pinnedFields.has(path) || prefixFields.has(path)) continue;
      let indexDirection: 1 | -1;
      if (position < index.fields.length) {
        const field = index.fields[position]!;
        if (field.path !== path) return { served: false, reverse: false };
        indexDirection = field.direction;
      } else if (index.unique) {
        break;
      } else if (index.idTail && position === index.fields.length) {
        if (path !== '_id') return { served: false, reverse: false };
        indexDirection = 1;
      } else {
        break;
      }
      const relative = direction * indexDirection;
      if (sign === 0) sign = relative;
      else if (relative !== sign) return { served: false, reverse: false };
      position++;
      if (path === '_id') break;
    }
  }
  return { served: true, reverse: sign === -1 };
}

function pinned(shape: FilterShape): Set<string> {
  const paths = new Set<string>();
  for (const [path, bounds] of shape.fields) if (bounds.equals?.length === 1) paths.add(path);
  return paths;
}

/** The `$or` hull on one index: one range spanning every branch's single range, or undefined. */
function hullRanges(index: PlannableIndex, filter: Filter, branches: readonly Filter[]): IndexRanges | undefined {
  let start: Buffer | undefined;
  let end: Buffer | undefined;
  let bound = Infinity;
  let equalityFields = Infinity;
  for (const branch of branches) {
    const planned = rangesFor(index, analyzeFilter([filter, branch], true));
    if (planned.ranges.length === 0) continue;
    if (planned.ranges.length > 1) return undefined;
    const range = planned.ranges[0]!;
    if (!start || Buffer.compare(range.start, start) < 0) start = range.start;
    if (!end || Buffer.compare(range.end, end) > 0) end = range.end;
    bound = Math.min(bound, planned.equalityFields + (planned.rangeUsed ? 1 : 0));
    equalityFields = Math.min(equalityFields, planned.equalityFields);
  }
  if (!start || !end) return { ranges: [], equalityFields: 0, rangeUsed: false };
  return { ranges: [{ start, end }], equalityFields, rangeUsed: bound > equalityFields };
}

export function planQuery(indexes: readonly PlannableIndex[], filter: Filter, sort: Sort = []): QueryPlan {
  const shape = analyzeFilter([filter]);
  const pinnedFields = pinned(shape);
  let best: QueryPlan | undefined;
  const consider = (candidate: QueryPlan) => {
    if (!best || rank(candidate, best) < 0) best = candidate;
  };
  for (const index of indexes) {
    const plain = rangesFor(index, shape);
    const plainOrder = sortOrder(index, plain.equalityFields, sort, pinnedFields);
    const plainBound = plain.equalityFields + (plain.rangeUsed ? 1 : 0);
    consider({
      index,
      ranges: plain.ranges,
      reverse: plainOrder.reverse,
      sortServed: plainOrder.served,
      covered: shape.exact && isCovered(index, shape, plain),
      boundFields: plainBound,
    });
    if (shape.orGroups.length === 1 && plain.ranges.length === 1) {
      const hull = hullRanges(index, filter, shape.orGroups[0]!);
      const hullBound = hull ? hull.equalityFields + (hull.rangeUsed ? 1 : 0) : 0;
      if (hull && hullBound > plainBound) {
        consider({
          index,
          ranges: hull.ranges,
          reverse: plainOrder.reverse,
          sortServed: plainOrder.served,
          covered: false,
          boundFields: hullBound,
        });
      }
    }
  }
  return best!;
}

function isCovered(index: PlannableIndex, shape: FilterShape, planned: IndexRanges): boolean {
  const consumed = index.fields.slice(0, planned.equalityFields + (planned.rangeUsed ? 1 : 0)).map((field) => field.path);
  if (consumed.length !== shape.fields.size) return false;
  return consumed.every((path, position) => {
    const bounds = shape.fields.get(path);
    if (!bounds?.exact) return false;
    // An equality field's range conditions are not in the key ranges, only its values are.
    return position >= planned.equalityFields || (!bounds.lower && !bounds.upper);
  });
}

function rank(a: QueryPlan, b: QueryPlan): number {
  if (a.boundFields !== b.boundFields) return b.boundFields - a.boundFields;
  if (a.sortServed !== b.sortServed) return a.sortServed ? -1 : 1;
  if (a.index.primary !== b.index.primary) return a.index.primary ? -1 : 1;
  return a.ranges.length - b.ranges.length;
}
