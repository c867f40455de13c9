/**
 * The embedded Store: one LMDB environment per database at `${dataDir}/${database}`.
 *
 * - `docs` holds every document under key (collection, `_id`), msgpack-encoded.
 * - `entries` holds secondary index entries under (collection, index name, field
 *   values..., `_id` unless the index is unique), each valued with the document's `_id`.
 *   Entries are written in the same transaction as their document; a unique clash
 *   throws ConflictError inside it, which aborts everything that call wrote.
 * - `meta` holds index definitions per collection and the persisted id sequences.
 *
 * Every write runs in an LMDB child transaction, so a throw rolls back exactly that call.
 * The environment is opened with `overlappingSync: false`: lmdb-js's default on Linux
 * (overlapping sync) resolves a write when it is committed but before it is fsynced;
 * without it the commit itself syncs, so a write's promise resolves only once it is on disk.
 *
 * Reads go through the query planner (see query-plan.ts) and scan key ranges in
 * bounded batches, re-seeking after the last key, so no read transaction outlives a
 * batch and `iterate` streams without holding the collection in memory.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { AppError, ConflictError } from '../errors';
import {
  applyUpdate,
  assertDocId,
  compileFilter,
  queryCacheKey,
  sameValue,
  toStoredDocument,
  upsertSeed,
  withIdFirst,
  type DocumentMatcher,
} from './documents';
import { generateStringId, IdBlocks } from './ids';
import { AFTER_PREFIX, encodePrefix, KeyBuilder, sortComponent, valuesAtPath } from './keys';
import { planQuery, type KeyRange, type PlannableIndex, type QueryPlan } from './query-plan';
import type {
  BulkUpsertResult,
  Collection,
  CollectionSpec,
  Doc,
  DocId,
  Filter,
  FindOptions,
  IndexSpec,
  Sort,
  Store,
  Update,
  UpdateResult,
  UpsertRow,
} from './store';

export interface EmbeddedStoreOptions {
  dataDir: string;
  database: string;
}

export async function openEmbeddedStore(options: EmbeddedStoreOptions): Promise<Store> {
  const path = join(options.dataDir, options.database);
  mkdirSync(path, { recursive: true });
  const root = open({ path, overlappingSync: false, maxDbs: 8 });
  return new EmbeddedStore(root);
}

type MetaKey = [kind: 'collection' | 'sequence', name: string];

interface StoredIndex {
  name: string;
  keys: Array<[string, 1 | -1]>;
  unique: boolean;
  /** Some document had an array on an indexed path; such an index is kept but never planned on. */
  multikey: boolean;
}

interface CollectionMeta {
  indexes: StoredIndex[];
}

interface IndexState {
  stored: StoredIndex;
  plannable: PlannableIndex;
  segments: string[][];
}

interface CollectionState {
  name: string;
  docPrefix: Buffer;
  primary: PlannableIndex;
  indexes: IndexState[];
  /** Plans and compiled filters by query shape and values (see `prepare`); emptied whenever the usable indexes change. */
  prepared: Map<string, PreparedQuery>;
}

/** What a read needs besides its key ranges' contents; pure data, shared by every read of the same query. */
interface PreparedQuery {
  plan: QueryPlan;
  /** Compiled on first use: a covered count never needs it. */
  matcher?: DocumentMatcher;
}

const PRIMARY_INDEX_NAME = '_id_';
/** Prepared queries kept per collection; the oldest goes first. */
const MAX_PREPARED = 512;
const FIRST_BATCH = 32;
const MAX_BATCH = 4096;

/** Thrown inside a write when the in-memory id block ran dry; the write is retried after a refill. */
class IdsExhausted extends Error {
  constructor(readonly needed: number) {
    super('id block exhausted');
  }
}

class EmbeddedStore implements Store {
  readonly docs: Database<Doc, Buffer>;
  readonly entries: Database<DocId, Buffer>;
  readonly meta: Database<unknown, MetaKey>;
  readonly ids: IdBlocks;
  readonly maxKeySize: number;
  private readonly states = new Map<string, CollectionState>();

  constructor(readonly root: RootDatabase) {
    this.docs = root.openDB<Doc, Buffer>('docs', { keyEncoding: 'binary' });
    this.entries = root.openDB<DocId, Buffer>('entries', { keyEncoding: 'binary' });
    this.meta = root.openDB<unknown, MetaKey>('meta', {});
    this.maxKeySize = (root as unknown as { maxKeySize?: number }).maxKeySize ?? 511;
    this.ids = new IdBlocks((sequence, size) =>
      this.write(() => {
        const key: MetaKey = ['sequence', sequence];
        const lastReserved = (this.meta.get(key) as number | undefined) ?? 0;
        this.meta.putSync(key, lastReserved + size);
        return lastReserved + 1;
      }),
    );
  }

  /** Runs `work` atomically in its own child transaction; resolves after the durable commit. */
  async write<T>(work: () => T): Promise<T> {
    try {
      return await this.root.childTransaction(work);
    } catch (error) {
      if (error instanceof AppError || error instanceof IdsExhausted) throw error;
      throw new AppError('internal', `Embedded store write failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async collection<T extends Doc = Doc>(spec: CollectionSpec): Promise<Collection<T>> {
    assertName(spec.name, 'collection');
    const state = this.stateOf(spec.name);
    for (const index of spec.indexes ?? []) {
      validateIndexSpec(spec.name, index);
      const existing = state.indexes.find((candidate) => candidate.stored.name === index.name);
      if (existing) {
        assertSameIndex(spec.name, existing.stored, index);
        continue;
      }
      await this.write(() => this.buildIndexSync(state, index));
    }
    return new EmbeddedCollection<T>(this, state, spec.autoIncrement === true);
  }

  allocateIds(sequence: string, count = 1): Promise<number> {
    assertName(sequence, 'sequence');
    return this.ids.allocate(sequence, count);
  }

  /** A read proves the environment is open and its map readable. */
  async ping(): Promise<void> {
    this.meta.get(['sequence', '']);
  }

  async close(): Promise<void> {
    await this.root.close();
  }

  private stateOf(name: string): CollectionState {
    let state = this.states.get(name);
    if (!state) {
      const docPrefix = encodePrefix(name);
      const meta = this.meta.get(['collection', name]) as CollectionMeta | undefined;
      state = {
        name,
        docPrefix,
        primary: {
          name: PRIMARY_INDEX_NAME,
          fields: [{ path: '_id', direction: 1 }],
          unique: true,
          primary: true,
          prefix: docPrefix,
          idTail: false,
        },
        indexes: (meta?.indexes ?? []).map((stored) => indexState(name, stored)),
        prepared: new Map(),
      };
      this.states.set(name, state);
    }
    return state;
  }

  /** Creates the index (inside a write) unless a concurrent call already did. */
  private buildIndexSync(state: CollectionState, spec: IndexSpec): void {
    const meta = (this.meta.get(['collection', state.name]) as CollectionMeta | undefined) ?? { indexes: [] };
    const persisted = meta.indexes.find((candidate) => candidate.name === spec.name);
    if (persisted) {
      assertSameIndex(state.name, persisted, spec);
      if (!state.indexes.some((candidate) => candidate.stored.name === spec.name)) {
        state.indexes.push(indexState(state.name, persisted));
        state.prepared.clear();
      }
      return;
    }
    const index = indexState(state.name, {
      name: spec.name,
      keys: spec.keys.map(([field, direction]) => [field, direction]),
      unique: spec.unique === true,
      multikey: false,
    });
    for (const { value: document } of this.docs.getRange({ start: state.docPrefix, end: afterPrefix(state.docPrefix) })) {
      for (const key of this.entryKeys(index, document)) this.putEntrySync(state, index, key, document._id);
    }
    meta.indexes.push(index.stored);
    this.meta.putSync(['collection', state.name], meta);
    state.indexes.push(index);
    state.prepared.clear();
  }

  docKey(state: CollectionState, id: DocId): Buffer {
    return KeyBuilder.from(state.docPrefix).value(id).toBuffer();
  }

  /** The entry keys `document` needs in `index`: one, or one per array element on a multikey path. */
  entryKeys(index: IndexState, document: Doc): Buffer[] {
    const { plannable, segments } = index;
    const perField: unknown[][] = [];
    let arrayField = -1;
    for (let i = 0; i < segments.length; i++) {
      const { values, multi } = valuesAtPath(document, segments[i]!);
      if (multi) {
        if (arrayField !== -1) {
          throw new AppError('invalid_argument', `Cannot index parallel arrays in index ${plannable.name}.`);
        }
        arrayField = i;
      }
      perField.push(values);
    }
    if (arrayField !== -1 && !index.stored.multikey) index.stored.multikey = true;
    const builder = KeyBuilder.from(plannable.prefix);
    if (arrayField === -1) return [this.entryKey(index, builder, perField, arrayField, 0, document._id)];
    const unique = new Map<string, Buffer>();
    for (let choice = 0; choice < perField[arrayField]!.length; choice++) {
      const key = this.entryKey(index, builder, perField, arrayField, choice, document._id);
      unique.set(key.toString('latin1'), key);
    }
    return [...unique.values()];
  }

  /** One entry key of `index`: the array field's element `choice`, every other field's single value, then the id. */
  private entryKey(index: IndexState, builder: KeyBuilder, perField: unknown[][], arrayField: number, choice: number, id: DocId): Buffer {
    const { plannable } = index;
    builder.truncate(plannable.prefix.length);
    for (let i = 0; i < perField.length; i++) {
      builder.value(i === arrayField ? perField[i]![choice] : perField[i]![0], plannable.fields[i]!.direction);
    }
    if (plannable.idTail) builder.value(id);
    const key = builder.toBuffer();
    if (key.length > this.maxKeySize) {
      throw new AppError('invalid_argument', `Indexed values too large for index ${plannable.name} (${key.length} bytes).`);
    }
    return key;
  }

  private putEntrySync(state: CollectionState, index: IndexState, key: Buffer, id: DocId): void {
    if (index.stored.unique) {
      const holder = this.entries.get(key);
      if (holder !== undefined && !sameValue(holder, id)) throw duplicateKey(state.name, index.stored.name);
    }
    this.entries.putSync(key, id);
  }

  insertSync(state: CollectionState, document: Doc): void {
    const key = this.docKey(state, document._id);
    if (key.length > this.maxKeySize) throw new AppError('invalid_argument', `_id too long (${key.length} bytes as a key).`);
    if (this.docs.doesExist(key)) throw duplicateKey(state.name, PRIMARY_INDEX_NAME);
    for (const index of state.indexes) {
      const wasMultikey = index.stored.multikey;
      for (const entry of this.entryKeys(index, document)) this.putEntrySync(state, index, entry, document._id);
      if (index.stored.multikey !== wasMultikey) this.persistIndexesSync(state);
    }
    this.docs.putSync(key, document);
  }

  replaceSync(state: CollectionState, before: Doc, after: Doc): void {
    for (const index of state.indexes) {
      const wasMultikey = index.stored.multikey;
      const oldKeys = new Map(this.entryKeys(index, before).map((key) => [key.toString('latin1'), key]));
      const newKeys = new Map(this.entryKeys(index, after).map((key) => [key.toString('latin1'), key]));
      for (const [text, key] of oldKeys) if (!newKeys.has(text)) this.entries.removeSync(key);
      for (const [text, key] of newKeys) if (!oldKeys.has(text)) this.putEntrySync(state, index, key, after._id);
      if (index.stored.multikey !== wasMultikey) this.persistIndexesSync(state);
    }
    this.docs.putSync(this.docKey(state, after._id), after);
  }

  removeSync(state: CollectionState, document: Doc): void {
    for (const index of state.indexes) {
      for (const key of this.entryKeys(index, document)) this.entries.removeSync(key);
    }
    this.docs.removeSync(this.docKey(state, document._id));
  }

  /** An index just became multikey (so no longer plannable): forget the plans that used it, then persist the flag. */
  private persistIndexesSync(state: CollectionState): void {
    state.prepared.clear();
    this.meta.putSync(['collection', state.name], { indexes: state.indexes.map((index) => index.stored) } satisfies CollectionMeta);
  }

  plan(state: CollectionState, filter: Filter, sort: Sort): QueryPlan {
    const usable = state.indexes.filter((index) => !index.stored.multikey).map((index) => index.plannable);
    return planQuery([state.primary, ...usable], filter, sort);
  }

  /**
   * The plan of `filter` and `sort`, and (unless `needMatcher` is false) the compiled filter.
   * Both depend only on the query and the usable indexes, so a query of plain values
   * is planned and compiled once and reused by every later read with the same values.
   */
  prepare(state: CollectionState, filter: Filter, sort: Sort, needMatcher = true): PreparedQuery {
    const key = queryCacheKey(filter, sort);
    let prepared = key === undefined ? undefined : state.prepared.get(key);
    if (!prepared) {
      // Compiled before planning, as always: an invalid filter is refused the same way.
      const matcher = needMatcher ? compileFilter(filter) : undefined;
      prepared = { plan: this.plan(state, filter, sort), matcher };
      if (key !== undefined) {
        if (state.prepared.size >= MAX_PREPARED) state.prepared.delete(state.prepared.keys().next().value!);
        state.prepared.set(key, prepared);
      }
    }
    if (needMatcher) prepared.matcher ??= compileFilter(filter);
    return prepared;
  }

  /**
   * Matching documents in the requested order, pulled lazily: the plan's ranges are read in
   * batches (merged by the sort when a `$in` split them), filtered by the whole filter, and
   * sorted in memory only when no index serves the sort.
   */
  *matches(state: CollectionState, filter: Filter, options: FindOptions = {}): Generator<Doc, void, undefined> {
    const sort = options.sort ?? [];
    const skip = Math.max(0, options.skip ?? 0);
    // As in MongoDB, a limit of 0 means none and a negative limit counts like its absolute value.
    const limit = options.limit ? Math.abs(options.limit) : Infinity;
    // A filter naming its `_id`s reads just those documents, however many (a plan caps `$in` at MAX_RANGES and may pick
    // another index), and matches only the rest of the filter (matching a long `$in` costs its length per document).
    const pinned = pinnedIds(filter);
    let source: DocumentSource;
    let matcher: DocumentMatcher;
    let sortServed: boolean;
    if (pinned) {
      matcher = compileFilter(pinned.rest);
      source = this.idSource(state, pinned.ids);
      sortServed = sort.length === 0 || (sort[0]![0] === '_id' && sort[0]![1] === 1);
    } else {
      const { plan, matcher: compiled } = this.prepare(state, filter, sort);
      matcher = compiled!;
      source = this.sourceFor(state, plan, sort, plan.sortServed ? skip + limit : Infinity);
      sortServed = plan.sortServed;
    }
    let skipped = 0;
    let yielded = 0;
    if (sortServed) {
      for (let document = source.next(); document !== undefined; document = source.next()) {
        if (!matcher(document)) continue;
        if (skipped < skip) {
          skipped++;
          continue;
        }
        yield document;
        if (++yielded >= limit) return;
      }
      return;
    }
    const matched = collectMatches(source, matcher);
    const sorted = sortDocuments(matched, sort);
    const end = Math.min(skip + limit, sorted.length);
    for (let i = skip; i < end; i++) yield sorted[i]!;
  }

  /** The documents of `ids` that exist, in `_id` (primary key) order. */
  private idSource(state: CollectionState, ids: readonly DocId[]): DocumentSource {
    const keys = new Map<string, Buffer>();
    for (const id of ids) {
      const key = this.docKey(state, id);
      keys.set(key.toString('latin1'), key);
    }
    const ordered = [...keys.values()].sort(Buffer.compare);
    let position = 0;
    return {
      next: () => {
        while (position < ordered.length) {
          const document = this.docs.get(ordered[position++]!) as Doc | undefined;
          if (document !== undefined) return document;
        }
        return undefined;
      },
    };
  }

  private sourceFor(state: CollectionState, plan: QueryPlan, sort: Sort, wanted: number): DocumentSource {
    const ranges = plan.reverse ? [...plan.ranges].reverse() : plan.ranges;
    const sources = ranges.map((range) => new RangeSource(this, state, plan.index, range, plan.reverse, wanted));
    if (sources.length === 1) return sources[0]!;
    if (sort.length === 0 || !plan.sortServed) return new ConcatSource(sources);
    return new MergeSource(sources, sort);
  }

  countSync(state: CollectionState, filter: Filter): number {
    const { plan } = this.prepare(state, filter, [], false);
    if (plan.covered) {
      const database = plan.index.primary ? this.docs : this.entries;
      return plan.ranges.reduce((total, range) => total + database.getKeysCount({ start: range.start, end: range.end }), 0);
    }
    let count = 0;
    for (const _ of this.matches(state, filter)) count++;
    return count;
  }
}

interface DocumentSource {
  next(): Doc | undefined;
}

/**
 * One key range of the primary or a secondary index, read in batches that re-seek after
 * the last key. The first batch is sized to what the caller wants, later ones grow; a
 * secondary entry's document is fetched only when it is taken.
 */
class RangeSource implements DocumentSource {
  /** Documents (primary) or `_id`s (secondary) of the current batch. */
  private batch: unknown[] = [];
  private position = 0;
  private resumeAfter: Buffer | undefined;
  private exhausted = false;
  private batchSize: number;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly state: CollectionState,
    private readonly index: PlannableIndex,
    private readonly range: KeyRange,
    private readonly reverse: boolean,
    wanted: number,
  ) {
    this.batchSize = Math.min(MAX_BATCH, Math.max(FIRST_BATCH, wanted));
  }

  next(): Doc | undefined {
    for (;;) {
      while (this.position >= this.batch.length) {
        if (this.exhausted) return undefined;
        this.fill();
      }
      const item = this.batch[this.position++];
      if (this.index.primary) return item as Doc;
      const document = this.store.docs.get(this.store.docKey(this.state, item as DocId));
      if (document !== undefined) return document;
    }
  }

  private fill(): void {
    const { range, reverse } = this;
    const options = reverse
      ? { start: this.resumeAfter ?? range.end, end: range.start, inclusiveEnd: true, exclusiveStart: true, reverse: true }
      : { start: this.resumeAfter ?? range.start, end: range.end, exclusiveStart: this.resumeAfter !== undefined };
    const limit = this.batchSize;
    this.batchSize = Math.min(this.batchSize * 4, MAX_BATCH);
    this.batch = [];
    this.position = 0;
    let lastKey: Buffer | undefined;
    const database = this.index.primary ? this.store.docs : this.store.entries;
    for (const { key, value } of (database as Database<unknown, Buffer>).getRange({ ...options, limit })) {
      lastKey = key;
      this.batch.push(value);
    }
    if (lastKey) this.resumeAfter = Buffer.from(lastKey);
    if (this.batch.length < limit) this.exhausted = true;
  }
}

class ConcatSource implements DocumentSource {
  private current = 0;

  constructor(private readonly sources: DocumentSource[]) {}

  next(): Doc | undefined {
    while (this.current < this.sources.length) {
      const document = this.sources[this.current]!.next();
      if (document !== undefined) return document;
      this.current++;
    }
    return undefined;
  }
}

/** Merges sources that are each in sort order into one stream in sort order. */
class MergeSource implements DocumentSource {
  private readonly heads: Array<{ document: Doc; key: Buffer[] } | undefined>;

  constructor(
    private readonly sources: DocumentSource[],
    private readonly sort: Sort,
  ) {
    this.heads = sources.map((source) => this.headOf(source));
  }

  private headOf(source: DocumentSource) {
    const document = source.next();
    return document === undefined ? undefined : { document, key: sortKey(document, this.sort) };
  }

  next(): Doc | undefined {
    let best = -1;
    for (let i = 0; i < this.heads.length; i++) {
      const head = this.heads[i];
      if (head && (best === -1 || compareSortKeys(head.key, this.heads[best]!.key, this.sort) < 0)) best = i;
    }
    if (best === -1) return undefined;
    const { document } = this.heads[best]!;
    this.heads[best] = this.headOf(this.sources[best]!);
    return document;
  }
}

function collectMatches(source: DocumentSource, matcher: DocumentMatcher): Doc[] {
  const matched: Doc[] = [];
  for (let document = source.next(); document !== undefined; document = source.next()) {
    if (matcher(document)) matched.push(document);
  }
  return matched;
}

function sortKey(document: Doc, sort: Sort): Buffer[] {
  return sort.map(([path, direction]) => sortComponent(document, path.split('.'), direction));
}

function compareSortKeys(a: Buffer[], b: Buffer[], sort: Sort): number {
  for (let i = 0; i < sort.length; i++) {
    const order = Buffer.compare(a[i]!, b[i]!) * sort[i]![1];
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * The `_id`s a filter pins at its top level (`_id: v`, `$eq`, `$in`), and the rest of the filter
 * still to match (without `_id` when reading just those ids settles it), else undefined.
 */
function pinnedIds(filter: Filter): { ids: DocId[]; rest: Filter } | undefined {
  if (!Object.hasOwn(filter, '_id')) return undefined;
  const { _id: condition, ...others } = filter as Record<string, unknown>;
  const isId = (value: unknown): value is DocId => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
  if (isId(condition)) return { ids: [condition], rest: others };
  if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) return undefined;
  const operators = condition as Record<string, unknown>;
  const keys = Object.keys(operators);
  if (keys.some((key) => !key.startsWith('$'))) return undefined;
  const pinnedBy = isId(operators.$eq) ? '$eq' : Array.isArray(operators.$in) && operators.$in.every(isId) ? '$in' : undefined;
  if (!pinnedBy) return undefined;
  const { [pinnedBy]: values, ...otherOperators } = operators;
  const rest = keys.length === 1 ? others : { ...others, _id: otherOperators };
  return { ids: pinnedBy === '$eq' ? [values as DocId] : (values as DocId[]), rest };
}

/** Stable, so documents that tie keep their scan (`_id`) order. */
function sortDocuments(documents: Doc[], sort: Sort): Doc[] {
  if (sort.length === 0) return documents;
  return documents
    .map((document) => ({ document, key: sortKey(document, sort) }))
    .sort((a, b) => compareSortKeys(a.key, b.key, sort))
    .map(({ document }) => document);
}

class EmbeddedCollection<T extends Doc> implements Collection<T> {
  readonly name: string;

  constructor(
    private readonly store: EmbeddedStore,
    private readonly state: CollectionState,
    private readonly autoIncrement: boolean,
  ) {
    this.name = state.name;
  }

  async insertOne(input: Omit<T, '_id'> & { _id?: DocId }): Promise<T> {
    const [document] = await this.prepareInserts([input]);
    await this.store.write(() => this.store.insertSync(this.state, document!));
    return document as T;
  }

  async insertMany(inputs: Array<Omit<T, '_id'> & { _id?: DocId }>): Promise<T[]> {
    if (inputs.length === 0) return [];
    const documents = await this.prepareInserts(inputs);
    await this.store.write(() => {
      for (const document of documents) this.store.insertSync(this.state, document);
    });
    return documents as T[];
  }

  /** Stored copies with `_id` assigned: one id block call for all documents that lack one. */
  private async prepareInserts(inputs: ReadonlyArray<Record<string, unknown>>): Promise<Doc[]> {
    const missing = inputs.filter((input) => input['_id'] === undefined).length;
    let next = missing > 0 && this.autoIncrement ? await this.store.ids.allocate(this.name, missing) : 0;
    return inputs.map((input) => {
      const document = toStoredDocument(input);
      const id = document['_id'] ?? (this.autoIncrement ? next++ : generateStringId());
      assertDocId(id);
      return withIdFirst(document, id);
    });
  }

  async findById(id: DocId): Promise<T | null> {
    assertDocId(id);
    return (this.store.docs.get(this.store.docKey(this.state, id)) as T | undefined) ?? null;
  }

  async findOne(filter: Filter, options: { sort?: Sort } = {}): Promise<T | null> {
    for (const document of this.store.matches(this.state, filter, { sort: options.sort, limit: 1 })) return document as T;
    return null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return [...this.store.matches(this.state, filter, options)] as T[];
  }

  async *iterate(filter: Filter, options: FindOptions = {}): AsyncIterable<T> {
    const documents = this.store.matches(this.state, filter, options);
    for (let next = documents.next(); !next.done; next = documents.next()) yield next.value as T;
  }

  async count(filter: Filter): Promise<number> {
    return this.store.countSync(this.state, filter);
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const result = await this.writeWithIds(options.upsert ? 1 : 0, () => this.updateFirstSync(filter, update, options.upsert === true, []));
    return result.result;
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: { upsert?: boolean; sort?: Sort } = {}): Promise<T | null> {
    const result = await this.writeWithIds(options.upsert ? 1 : 0, () =>
      this.updateFirstSync(filter, update, options.upsert === true, options.sort ?? []),
    );
    return (result.document as T | undefined) ?? null;
  }

  private updateFirstSync(filter: Filter, update: Update, upsert: boolean, sort: Sort): { result: UpdateResult; document?: Doc } {
    for (const found of this.store.matches(this.state, filter, { sort, limit: 1 })) {
      const after = structuredClone(found);
      const modified = applyUpdate(after, update, false);
      if (modified) this.store.replaceSync(this.state, found, after);
      return { result: { matched: 1, modified: modified ? 1 : 0 }, document: after };
    }
    if (!upsert) return { result: { matched: 0, modified: 0 } };
    const document = this.seedSync(filter, update);
    applyUpdate(document, update, true);
    this.store.insertSync(this.state, document);
    return { result: { matched: 0, modified: 0, upsertedId: document._id }, document };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    return this.store.write(() => {
      const found = [...this.store.matches(this.state, filter)];
      let modified = 0;
      for (const before of found) {
        const after = structuredClone(before);
        if (!applyUpdate(after, update, false)) continue;
        this.store.replaceSync(this.state, before, after);
        modified++;
      }
      return { matched: found.length, modified };
    });
  }

  async bulkUpsert(rows: ReadonlyArray<UpsertRow<T>>): Promise<BulkUpsertResult> {
    if (rows.length === 0) return { inserted: 0, updated: 0, unchanged: 0 };
    const stored = rows.map((row) => ({
      key: toStoredDocument(row.key) as Record<string, unknown>,
      set: toStoredDocument(row.set) as Record<string, unknown>,
      setOnInsert: row.setOnInsert ? (toStoredDocument(row.setOnInsert) as Record<string, unknown>) : undefined,
    }));
    return this.writeWithIds(rows.length, () => {
      const counts: BulkUpsertResult = { inserted: 0, updated: 0, unchanged: 0 };
      const lookup = new KeyLookup(this.store, this.state);
      for (const row of stored) {
        const existing = lookup.find(row.key);
        if (existing) {
          const after = structuredClone(existing);
          if (applyUpdate(after, { $set: row.set }, false)) {
            this.store.replaceSync(this.state, existing, after);
            counts.updated++;
          } else {
            counts.unchanged++;
          }
          continue;
        }
        const update: Update = { $set: row.set, ...(row.setOnInsert ? { $setOnInsert: row.setOnInsert } : {}) };
        const document = this.seedSync(row.key, update);
        applyUpdate(document, update, true);
        this.store.insertSync(this.state, document);
        counts.inserted++;
      }
      return counts;
    });
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.store.write(() => {
      for (const found of this.store.matches(this.state, filter, { limit: 1 })) {
        this.store.removeSync(this.state, found);
        return 1;
      }
      return 0;
    });
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.store.write(() => {
      const found = [...this.store.matches(this.state, filter)];
      for (const document of found) this.store.removeSync(this.state, document);
      return found.length;
    });
  }

  /** The document an upsert inserts before its update applies, `_id` first: from the filter, else the sequence, else a string id. */
  private seedSync(filter: Filter, update: Update): Doc {
    const seed = upsertSeed(filter, update);
    let id = seed._id;
    if (id === undefined && this.autoIncrement) {
      id = this.store.ids.takeSync(this.name);
      if (id === undefined) throw new IdsExhausted(1);
    }
    id ??= generateStringId();
    assertDocId(id);
    return withIdFirst(seed, id);
  }

  /** Runs a write that may insert up to `expectedInserts` autoIncrement documents, refilling ids and retrying when they run out. */
  private async writeWithIds<R>(expectedInserts: number, work: () => R): Promise<R> {
    if (this.autoIncrement && expectedInserts > 0) await this.store.ids.ensure(this.name, expectedInserts);
    for (;;) {
      try {
        return await this.store.write(work);
      } catch (error) {
        if (!(error instanceof IdsExhausted)) throw error;
        await this.store.ids.ensure(this.name, Math.max(error.needed, expectedInserts));
      }
    }
  }
}

/**
 * Finds the document an upsert key names. When a usable unique index has exactly the
 * key's fields and the key's values are scalars, that is one point read; otherwise the
 * key goes through the planner like any filter.
 */
class KeyLookup {
  private readonly byFieldSet = new Map<string, IndexState | null>();

  constructor(
    private readonly store: EmbeddedStore,
    private readonly state: CollectionState,
  ) {}

  find(key: Record<string, unknown>): Doc | undefined {
    const fields = Object.keys(key);
    const signature = [...fields].sort().join('\u0000');
    let index = this.byFieldSet.get(signature);
    if (index === undefined) {
      index =
        this.state.indexes.find(
          (candidate) =>
            candidate.stored.unique &&
            !candidate.stored.multikey &&
            candidate.stored.keys.length === fields.length &&
            candidate.stored.keys.every(([path]) => path in key),
        ) ?? null;
      this.byFieldSet.set(signature, index);
    }
    const pointKey = index && !index.stored.multikey ? this.pointKey(index, key) : undefined;
    if (pointKey) {
      const id = this.store.entries.get(pointKey);
      return id === undefined ? undefined : this.store.docs.get(this.store.docKey(this.state, id));
    }
    for (const document of this.store.matches(this.state, key, { limit: 1 })) return document;
    return undefined;
  }

  private pointKey(index: IndexState, key: Record<string, unknown>): Buffer | undefined {
    const builder = KeyBuilder.from(index.plannable.prefix);
    for (const { path, direction } of index.plannable.fields) {
      const value = key[path];
      if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
      builder.value(value, direction);
    }
    return builder.toBuffer();
  }
}

function indexState(collection: string, stored: StoredIndex): IndexState {
  const fields = stored.keys.map(([path, direction]) => ({ path, direction }));
  const lastIsId = fields[fields.length - 1]?.path === '_id';
  return {
    stored,
    segments: fields.map((field) => field.path.split('.')),
    plannable: {
      name: stored.name,
      fields,
      unique: stored.unique,
      primary: false,
      prefix: encodePrefix(collection, stored.name),
      idTail: !stored.unique && !lastIsId,
    },
  };
}

function afterPrefix(prefix: Buffer): Buffer {
  return Buffer.concat([prefix, Buffer.from([AFTER_PREFIX])]);
}

function duplicateKey(collection: string, index: string): ConflictError {
  return new ConflictError(`Duplicate key in ${collection} for unique index ${index}.`, { collection, index });
}

function assertName(name: string, what: string): void {
  if (typeof name !== 'string' || name.length === 0) throw new AppError('invalid_argument', `A ${what} name must be a non-empty string.`);
}

function validateIndexSpec(collection: string, index: IndexSpec): void {
  assertName(index.name, 'index');
  if (index.name === PRIMARY_INDEX_NAME) throw new AppError('invalid_argument', `Index name ${PRIMARY_INDEX_NAME} is reserved.`);
  if (index.keys.length === 0) throw new AppError('invalid_argument', `Index ${index.name} on ${collection} has no keys.`);
  for (const [field, direction] of index.keys) {
    if (typeof field !== 'string' || field.length === 0 || (direction !== 1 && direction !== -1)) {
      throw new AppError('invalid_argument', `Index ${index.name} on ${collection} has an invalid key.`);
    }
  }
}

function assertSameIndex(collection: string, stored: StoredIndex, spec: IndexSpec): void {
  const sameKeys =
    stored.keys.length === spec.keys.length &&
    stored.keys.every(([field, direction], i) => spec.keys[i]![0] === field && spec.keys[i]![1] === direction);
  if (!sameKeys || stored.unique !== (spec.unique === true)) {
    throw new AppError('invalid_argument', `Index ${spec.name} on ${collection} already exists with a different definition.`);
  }
}
