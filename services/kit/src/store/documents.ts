/**
 * Document-level semantics of the embedded store, delegated to mingo so filters and
 * update operators mean what they mean in MongoDB: compiling filters, applying updates,
 * building the document an upsert inserts, and keeping stored values JSON-like.
 */
import { Query } from 'mingo';
import { $inc, $max, $min, $push, $set, $unset } from 'mingo/operators/update';
import { AppError } from '../errors';
import type { Doc, DocId, Filter, Sort, Update } from './store';

export type DocumentMatcher = (document: Doc) => boolean;

export function compileFilter(filter: Filter): DocumentMatcher {
  if (Object.keys(filter).length === 0) return () => true;
  return scalarMatcher(filter) ?? mingoMatcher(filter);
}

function mingoMatcher(filter: Filter): DocumentMatcher {
  let query: Query;
  try {
    query = new Query(normalizeFilter(filter) as ConstructorParameters<typeof Query>[0]);
  } catch (error) {
    throw new AppError('invalid_query', `Invalid filter: ${messageOf(error)}`);
  }
  return (document) => query.test(document);
}

/** A finite number, a string or a boolean: a value every operator of the fast path compares as MongoDB does. */
function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

type ScalarTest = (value: unknown) => boolean;

const RANGE: Record<string, (a: number, b: number) => boolean> = {
  $lt: (a, b) => a < b,
  $lte: (a, b) => a <= b,
  $gt: (a, b) => a > b,
  $gte: (a, b) => a >= b,
};

/**
 * The matcher of a filter made only of top-level fields compared with scalars (`{ queue: 'x',
 * state: 'ready' }`, `{ visibleAt: { $lte: 1700000000000 } }`), without mingo: such filters come
 * with values that change on every call (a claim id, the time), so they cannot be compiled once
 * and kept, and mingo's compilation is most of what matching them costs. A field holding an
 * array or an object (where MongoDB's rules go further: an array matches when an element does)
 * (and NaN, which MongoDB orders below every number) is left to mingo, compiled on first need.
 * Undefined for any other filter.
 */
function scalarMatcher(filter: Filter): DocumentMatcher | undefined {
  const fields: string[] = [];
  const tests: ScalarTest[] = [];
  for (const [field, condition] of Object.entries(filter)) {
    if (field.length === 0 || field.startsWith('$') || field.includes('.')) return undefined;
    if (isScalar(condition)) {
      fields.push(field);
      tests.push((value) => value === condition);
      continue;
    }
    if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) return undefined;
    const entries = Object.entries(condition);
    if (entries.length === 0) return undefined;
    for (const [operator, operand] of entries) {
      const compare = RANGE[operator];
      if (operator === '$eq' && isScalar(operand)) tests.push((value) => value === operand);
      else if (compare && typeof operand === 'number' && Number.isFinite(operand))
        // Type bracketing: a numeric bound compares numbers only.
        tests.push((value) => typeof value === 'number' && compare(value, operand));
      else return undefined;
      fields.push(field);
    }
  }
  let full: DocumentMatcher | undefined;
  return (document) => {
    for (let i = 0; i < fields.length; i++) {
      const value = (document as Record<string, unknown>)[fields[i]!];
      if ((value !== null && typeof value === 'object') || Number.isNaN(value)) return (full ??= mingoMatcher(filter))(document);
      if (!tests[i]!(value)) return false;
    }
    return true;
  };
}

/** Operators whose compiled form depends only on their operands: a filter made of these may be compiled once and reused. */
const CACHEABLE_OPERATORS = new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists', '$and', '$or', '$nor']);
/** Longer keys (long `$in` lists) are not worth keeping. */
const MAX_CACHE_KEY_LENGTH = 2048;

/**
 * A string that tells apart every filter and sort that could plan or match differently
 * (types included: `1` is not `'1'`, `-0` is not `0`), or undefined when the filter holds
 * anything but plain JSON-like values and the operators above, or is too long to keep.
 */
export function queryCacheKey(filter: Filter, sort: Sort): string | undefined {
  let key = '';
  for (const [path, direction] of sort)
    key += `${JSON.stringify(path)}${direction === 1 ? '+' : direction === -1 ? '-' : `?${String(direction)}`},`;
  key += '|';
  const written = appendCanonical(filter, key);
  return written === undefined || written.length > MAX_CACHE_KEY_LENGTH ? undefined : written;
}

function appendCanonical(value: unknown, into: string): string | undefined {
  switch (typeof value) {
    case 'string':
      return `${into}s${JSON.stringify(value)}`;
    case 'number':
      return `${into}n${Object.is(value, -0) ? '-0' : String(value)};`;
    case 'boolean':
      return `${into}${value ? 'T' : 'F'}`;
    case 'undefined':
      return `${into}u`;
    case 'object': {
      if (value === null) return `${into}z`;
      if (Array.isArray(value)) {
        let out: string | undefined = `${into}[`;
        for (const element of value) {
          out = appendCanonical(element, out);
          if (out === undefined || out.length > MAX_CACHE_KEY_LENGTH) return undefined;
          out += ',';
        }
        return `${out}]`;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return undefined;
      let out: string | undefined = `${into}{`;
      for (const field of Object.keys(value)) {
        if (field.startsWith('$') && !CACHEABLE_OPERATORS.has(field)) return undefined;
        out = appendCanonical((value as Record<string, unknown>)[field], `${out}${JSON.stringify(field)}:`);
        if (out === undefined || out.length > MAX_CACHE_KEY_LENGTH) return undefined;
        out += ',';
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}

/** MongoDB reads `$gte: null` / `$lte: null` as "null or missing"; mingo does not, so say it plainly. */
function normalizeFilter(filter: unknown): unknown {
  if (Array.isArray(filter)) return filter.map(normalizeFilter);
  if (filter === null || typeof filter !== 'object') return filter;
  const normalized: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      normalized[key] = normalizeFilter(value);
    } else if (!key.startsWith('$') && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const condition: Record<string, unknown> = {};
      for (const [operator, operand] of Object.entries(value)) {
        if ((operator === '$gte' || operator === '$lte') && operand === null) condition['$eq'] = null;
        else condition[operator] = operand;
      }
      normalized[key] = condition;
    } else {
      normalized[key] = value;
    }
  }
  return normalized;
}

export function assertDocId(id: unknown): asserts id is DocId {
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return;
  throw new AppError('invalid_argument', `_id must be a string or a finite number, got ${describe(id)}.`);
}

/**
 * A deep copy holding only JSON-like values (plus Dates): object fields set to
 * `undefined` are dropped and array holes become null, as the MongoDB driver stores them
 * with `ignoreUndefined`; anything else (functions, bigints, class instances) is refused.
 */
export function toStoredValue(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new AppError('invalid_argument', `Numbers must be finite, got ${value}.`);
    return value;
  }
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map(toStoredValue);
  if (value instanceof Date) return new Date(value.getTime());
  if (typeof value === 'object' && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)) {
    const copy: Record<string, unknown> = {};
    for (const [field, fieldValue] of Object.entries(value)) {
      if (fieldValue !== undefined) copy[field] = toStoredValue(fieldValue);
    }
    return copy;
  }
  throw new AppError('invalid_argument', `Unsupported value in document: ${describe(value)}.`);
}

export function toStoredDocument<T>(document: T): T {
  return toStoredValue(document) as T;
}

/** The same fields with `_id` first, where MongoDB keeps it. */
export function withIdFirst(document: Record<string, unknown>, id: DocId): Doc {
  const { _id: _ignored, ...fields } = document;
  return { _id: id, ...fields };
}

/**
 * mingo's update operators, called directly: its `update()` builds a full operator context
 * per call (about 80 µs), the operator functions alone take a few µs.
 */
const UPDATE_OPERATORS: Record<string, (expression: Record<string, unknown>) => (document: Doc) => string[]> = {
  $set: (expression) => $set(expression),
  $unset: (expression) => $unset(expression as Record<string, ''>),
  $inc: (expression) => $inc(expression as Record<string, number>),
  $push: (expression) => $push(expression),
  $max: (expression) => $max(expression),
  $min: (expression) => $min(expression),
};

/**
 * Applies `update` to `document` in place; returns whether anything changed.
 * `$setOnInsert` applies only when `inserting`. `_id` may be set only to its current value.
 * Two operators on the same path, or on a path and its parent, are refused as in MongoDB.
 */
export function applyUpdate(document: Doc, update: Update, inserting: boolean): boolean {
  const steps: Array<[operator: string, expression: Record<string, unknown>]> = [];
  const paths: string[] = [];
  for (const [operator, fields] of Object.entries(update)) {
    if (operator !== '$setOnInsert' && !(operator in UPDATE_OPERATORS)) {
      throw new AppError('invalid_argument', `Unsupported update operator ${operator}.`);
    }
    if (fields === null || typeof fields !== 'object') throw new AppError('invalid_argument', `${operator} needs an object of fields.`);
    if (operator === '$setOnInsert' && !inserting) continue;
    const expression: Record<string, unknown> = {};
    for (const [path, operand] of Object.entries(fields)) {
      if (path === '_id') {
        if ((operator !== '$set' && operator !== '$setOnInsert') || !sameValue(operand, document._id)) throw immutableId();
        continue;
      }
      expression[path] = toStoredValue(operand);
      paths.push(path);
    }
    if (Object.keys(expression).length > 0) steps.push([operator === '$setOnInsert' ? '$set' : operator, expression]);
  }
  assertNoPathConflicts(paths);
  let changed = false;
  try {
    for (const [operator, expression] of steps) {
      if (UPDATE_OPERATORS[operator]!(expression)(document).length > 0) changed = true;
    }
  } catch (error) {
    throw new AppError('invalid_argument', `Invalid update: ${messageOf(error)}`);
  }
  return changed;
}

function assertNoPathConflicts(paths: string[]): void {
  const sorted = [...paths].sort();
  for (let i = 1; i < sorted.length; i++) {
    const [previous, current] = [sorted[i - 1]!, sorted[i]!];
    if (current === previous || current.startsWith(`${previous}.`)) {
      throw new AppError('invalid_argument', `Updating the path '${current}' would create a conflict at '${previous}'.`);
    }
  }
}

function immutableId(): AppError {
  return new AppError('invalid_argument', "Performing an update on the path '_id' would modify the immutable field '_id'.");
}

/**
 * The document an upsert starts from: the filter's equality conditions (top level and
 * inside `$and`, dotted paths expanded), plus `_id` taken from `$set`/`$setOnInsert` if given.
 */
export function upsertSeed(filter: Filter, update: Update): Partial<Doc> {
  const equalities: Record<string, unknown> = {};
  const visit = (part: Filter) => {
    for (const [key, condition] of Object.entries(part)) {
      if (key === '$and' && Array.isArray(condition)) condition.forEach((inner) => visit(inner as Filter));
      if (key.startsWith('$')) continue;
      if (isOperatorObject(condition)) {
        if ('$eq' in condition) equalities[key] = condition['$eq'];
      } else {
        equalities[key] = condition;
      }
    }
  };
  visit(filter);
  const seed: Record<string, unknown> = {};
  const idFromUpdate = update['$set']?.['_id'] ?? update['$setOnInsert']?.['_id'];
  if (idFromUpdate !== undefined) seed['_id'] = idFromUpdate;
  const { _id: filterId, ...rest } = equalities;
  if (filterId !== undefined) seed['_id'] = filterId;
  for (const [path, value] of Object.entries(rest)) {
    if (!path.includes('.')) {
      seed[path] = toStoredValue(value);
      continue;
    }
    try {
      $set({ [path]: toStoredValue(value) })(seed);
    } catch (error) {
      throw new AppError('invalid_argument', `Cannot build the upserted document: ${messageOf(error)}`);
    }
  }
  return seed as Partial<Doc>;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

/** Equality as BSON sees it for JSON-like values: same types, same values, same field order. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((element, i) => sameValue(element, other[i]));
  }
  const aEntries = Object.entries(a);
  const bEntries = Object.entries(b);
  return (
    aEntries.length === bEntries.length &&
    aEntries.every(([field, value], i) => bEntries[i]![0] === field && sameValue(value, bEntries[i]![1]))
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  return typeof value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
