/**
 * The MongoDB Store, on the official driver: one MongoClient per URL shared by every
 * store opened on it, database `${prefix}_${database}` (prefix `supply` unless given; a database
 * named in the URL is ignored), one `createIndexes` per collection with the IndexSpec names.
 *
 * Standalone MongoDB and FerretDB have no multi-document transactions, so the two
 * all-or-nothing calls compensate instead: `insertMany` deletes what it inserted before
 * the clash, and `bulkUpsert` reads the documents its keys name first, then on a clash
 * deletes the documents it inserted and restores the `set` fields of the ones it updated.
 * Readers may briefly see the partial write, and a concurrent write to the same documents
 * during that window can be overwritten by the restore.
 *
 * Every backend error leaves as a domain error: duplicate keys (11000/11001, also inside
 * bulk write errors, and FerretDB's SQLite "UNIQUE constraint failed") as ConflictError.
 */
import {
  MongoBulkWriteError,
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type AnyBulkWriteOperation,
  type Collection as DriverCollection,
  type Db,
  type Filter as DriverFilter,
  type UpdateFilter,
} from 'mongodb';
import { AppError, ConflictError } from '../errors';
import { assertDocId, toStoredDocument } from './documents';
import { generateStringId, ID_BLOCK_SIZE, IdBlocks } from './ids';
import type {
  BulkUpsertResult,
  Collection,
  CollectionSpec,
  Doc,
  DocId,
  Filter,
  FindOptions,
  Sort,
  Store,
  Update,
  UpdateResult,
  UpsertRow,
} from './store';

export interface MongoStoreOptions {
  url: string;
  database: string;
  /** Database name prefix (MONGODB_DATABASE_PREFIX), default `supply`. */
  prefix?: string;
}

export const COUNTERS_COLLECTION = 'counters';
/** One document per id block handed out, keyed `<sequence>@<first id>`; see MongoStore.reserveIds. */
export const COUNTER_CLAIMS_COLLECTION = 'counter_claims';

interface SharedClient {
  connecting: Promise<MongoClient>;
  users: number;
}

/** What the server behind a URL needs worked around. */
interface ServerTraits {
  /**
   * Most statements one `update` command may carry. FerretDB 1.x closes each statement's
   * SQLite cursor only when the whole command ends, so an update command with 100+
   * statements that match documents exhausts its connection pool and hangs the server.
   */
  maxUpdateStatements: number;
}

const FERRETDB_MAX_UPDATE_STATEMENTS = 50;

async function serverTraits(client: MongoClient): Promise<ServerTraits> {
  const info = await client.db('admin').command({ buildInfo: 1 });
  const ferretdb = typeof info['ferretdbVersion'] === 'string';
  return { maxUpdateStatements: ferretdb ? FERRETDB_MAX_UPDATE_STATEMENTS : Infinity };
}

const clients = new Map<string, SharedClient>();

async function acquireClient(url: string): Promise<MongoClient> {
  let shared = clients.get(url);
  if (!shared) {
    const client = new MongoClient(url, { ignoreUndefined: true });
    shared = { connecting: client.connect(), users: 0 };
    clients.set(url, shared);
    shared.connecting.catch(() => clients.delete(url));
  }
  shared.users++;
  try {
    return await shared.connecting;
  } catch (error) {
    shared.users--;
    throw translateError(error);
  }
}

async function releaseClient(url: string): Promise<void> {
  const shared = clients.get(url);
  if (!shared || --shared.users > 0) return;
  clients.delete(url);
  await (await shared.connecting).close();
}

export async function openMongoStore(options: MongoStoreOptions): Promise<Store> {
  const client = await acquireClient(options.url);
  try {
    const traits = await run(() => serverTraits(client));
    return new MongoStore(options.url, client.db(`${options.prefix ?? 'supply'}_${options.database}`), traits);
  } catch (error) {
    await releaseClient(options.url);
    throw error;
  }
}

interface CounterDoc {
  _id: string;
  value: number;
}

class MongoStore implements Store {
  readonly ids: IdBlocks;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly db: Db,
    readonly traits: ServerTraits,
  ) {
    this.ids = new IdBlocks((sequence, size) => this.reserveIds(sequence, size));
  }

  /**
   * Reserves whole, aligned blocks with `$inc` on the sequence's counter, then claims each
   * block by inserting its start into `counter_claims`. On MongoDB the `$inc` is atomic and
   * the claim always succeeds; FerretDB's findAndModify is not atomic across connections
   * (two concurrent increments can return the same value), and the unique claim is what
   * catches that: the loser abandons its blocks as a gap and increments again.
   */
  private async reserveIds(sequence: string, size: number): Promise<number> {
    const span = Math.ceil(size / ID_BLOCK_SIZE) * ID_BLOCK_SIZE;
    const counters = this.db.collection<CounterDoc>(COUNTERS_COLLECTION);
    const claims = this.db.collection<{ _id: string }>(COUNTER_CLAIMS_COLLECTION);
    for (;;) {
      let counter: CounterDoc | null;
      try {
        counter = await counters.findOneAndUpdate({ _id: sequence }, { $inc: { value: span } }, { upsert: true, returnDocument: 'after' });
      } catch (error) {
        // Two first reservations of a new sequence can both try to insert its counter.
        if (isDuplicateKey(error)) continue;
        throw translateError(error);
      }
      if (!counter) throw new AppError('internal', `Sequence ${sequence} returned no counter.`);
      const first = counter.value - span + 1;
      const blockStarts = Array.from({ length: span / ID_BLOCK_SIZE }, (_, i) => ({ _id: `${sequence}@${first + i * ID_BLOCK_SIZE}` }));
      try {
        await claims.insertMany(blockStarts, { ordered: true });
        return first;
      } catch (error) {
        if (!isDuplicateKey(error)) throw translateError(error);
      }
    }
  }

  async collection<T extends Doc = Doc>(spec: CollectionSpec): Promise<Collection<T>> {
    const collection = this.db.collection<Doc>(spec.name);
    const indexes = spec.indexes ?? [];
    if (indexes.length > 0) {
      await run(
        () =>
          collection.createIndexes(
            indexes.map((index) => ({
              name: index.name,
              key: new Map(index.keys.map(([field, direction]) => [field, direction])),
              ...(index.unique ? { unique: true } : {}),
            })),
          ),
        spec.name,
      );
    }
    return new MongoCollection<T>(this, collection, spec.autoIncrement === true);
  }

  allocateIds(sequence: string, count = 1): Promise<number> {
    return this.ids.allocate(sequence, count);
  }

  async ping(): Promise<void> {
    await run(() => this.db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await releaseClient(this.url);
  }
}

type InsertInput = Record<string, unknown> & { _id?: DocId };

class MongoCollection<T extends Doc> implements Collection<T> {
  readonly name: string;

  constructor(
    private readonly store: MongoStore,
    private readonly collection: DriverCollection<Doc>,
    private readonly autoIncrement: boolean,
  ) {
    this.name = collection.collectionName;
  }

  async insertOne(input: Omit<T, '_id'> & { _id?: DocId }): Promise<T> {
    const [document] = await this.prepareInserts([input]);
    await this.run(() => this.collection.insertOne(document!));
    return document as T;
  }

  /** Ordered insert; on any failure the documents inserted before it are deleted again. */
  async insertMany(inputs: Array<Omit<T, '_id'> & { _id?: DocId }>): Promise<T[]> {
    if (inputs.length === 0) return [];
    const documents = await this.prepareInserts(inputs);
    try {
      await this.collection.insertMany(documents, { ordered: true });
    } catch (error) {
      const inserted = insertedBeforeFailure(error);
      if (inserted > 0) {
        const ids = documents.slice(0, inserted).map((document) => document._id);
        await this.run(() => this.collection.deleteMany({ _id: { $in: ids } }));
      }
      throw translateError(error, this.name);
    }
    return documents as T[];
  }

  private async prepareInserts(inputs: ReadonlyArray<InsertInput>): Promise<Doc[]> {
    const missing = inputs.filter((input) => input._id === undefined).length;
    let next = missing > 0 && this.autoIncrement ? await this.store.ids.allocate(this.name, missing) : 0;
    return inputs.map((input) => {
      const { _id, ...fields } = toStoredDocument(input);
      const id = _id ?? (this.autoIncrement ? next++ : generateStringId());
      assertDocId(id);
      return { _id: id, ...fields };
    });
  }

  async findById(id: DocId): Promise<T | null> {
    return (await this.run(() => this.collection.findOne({ _id: id }))) as T | null;
  }

  async findOne(filter: Filter, options: { sort?: Sort } = {}): Promise<T | null> {
    return (await this.run(() => this.collection.findOne(filter as DriverFilter<Doc>, { sort: sortOf(options.sort) }))) as T | null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    return (await this.run(() => this.cursor(filter, options).toArray())) as T[];
  }

  async *iterate(filter: Filter, options: FindOptions = {}): AsyncIterable<T> {
    const cursor = this.cursor(filter, options);
    try {
      for await (const document of cursor) yield document as T;
    } catch (error) {
      throw translateError(error, this.name);
    } finally {
      await cursor.close();
    }
  }

  private cursor(filter: Filter, options: FindOptions) {
    return this.collection.find(filter as DriverFilter<Doc>, {
      sort: sortOf(options.sort),
      ...(options.limit ? { limit: options.limit } : {}),
      ...(options.skip ? { skip: options.skip } : {}),
    });
  }

  count(filter: Filter): Promise<number> {
    return this.run(() => this.collection.countDocuments(filter as DriverFilter<Doc>));
  }

  async updateOne(filter: Filter, update: Update, options: { upsert?: boolean } = {}): Promise<UpdateResult> {
    const modifier = options.upsert ? await this.withInsertId(filter, update) : update;
    const result = await this.run(() =>
      this.collection.updateOne(filter as DriverFilter<Doc>, modifier as UpdateFilter<Doc>, { upsert: options.upsert === true }),
    );
    return {
      matched: result.matchedCount,
      modified: result.modifiedCount,
      ...(result.upsertedId !== null && result.upsertedId !== undefined ? { upsertedId: result.upsertedId as DocId } : {}),
    };
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: { upsert?: boolean; sort?: Sort } = {}): Promise<T | null> {
    const modifier = options.upsert ? await this.withInsertId(filter, update) : update;
    return (await this.run(() =>
      this.collection.findOneAndUpdate(filter as DriverFilter<Doc>, modifier as UpdateFilter<Doc>, {
        upsert: options.upsert === true,
        sort: sortOf(options.sort),
        returnDocument: 'after',
      }),
    )) as T | null;
  }

  /**
   * Adds the `_id` an upsert would insert under (`$setOnInsert`), so ids stay numbers from
   * the collection's sequence (or string ids) rather than server-made ObjectIds.
   */
  private async withInsertId(filter: Filter, update: Update): Promise<Update> {
    if (isIdEquality(filter['_id']) || update['$set']?.['_id'] !== undefined || update['$setOnInsert']?.['_id'] !== undefined) {
      return update;
    }
    const id = this.autoIncrement ? await this.store.ids.allocate(this.name) : generateStringId();
    return { ...update, $setOnInsert: { ...update['$setOnInsert'], _id: id } };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const result = await this.run(() => this.collection.updateMany(filter as DriverFilter<Doc>, update as UpdateFilter<Doc>));
    return { matched: result.matchedCount, modified: result.modifiedCount };
  }

  /**
   * One ordered `bulkWrite` of `updateOne` upserts (several on FerretDB, see ServerTraits).
   * Ids for rows that may insert come from one id block call; counts come from the bulk
   * result. See the module comment for how a clash is undone.
   */
  async bulkUpsert(rows: ReadonlyArray<UpsertRow<T>>): Promise<BulkUpsertResult> {
    if (rows.length === 0) return { inserted: 0, updated: 0, unchanged: 0 };
    const firstId = this.autoIncrement ? await this.store.ids.allocate(this.name, rows.length) : 0;
    const planned = rows.map((row, i) => {
      const key = row.key as Record<string, unknown>;
      const set = (row.set ?? {}) as Record<string, unknown>;
      const setOnInsert = { ...(row.setOnInsert as Record<string, unknown> | undefined) };
      const insertId = (key['_id'] ?? set['_id'] ?? setOnInsert['_id'] ?? (this.autoIncrement ? firstId + i : generateStringId())) as DocId;
      if (key['_id'] === undefined && set['_id'] === undefined) setOnInsert['_id'] = insertId;
      const update: Record<string, Record<string, unknown>> = {};
      if (Object.keys(set).length > 0) update['$set'] = set;
      if (Object.keys(setOnInsert).length > 0) update['$setOnInsert'] = setOnInsert;
      return { key, set, insertId, update };
    });
    const before = await this.documentsByKey(planned.map((row) => row.key));
    const operations: AnyBulkWriteOperation<Doc>[] = planned.map((row) => ({
      updateOne: { filter: row.key as DriverFilter<Doc>, update: row.update as UpdateFilter<Doc>, upsert: true },
    }));
    try {
      const counts: BulkUpsertResult = { inserted: 0, updated: 0, unchanged: 0 };
      for (const batch of batches(operations, this.store.traits.maxUpdateStatements)) {
        const result = await this.collection.bulkWrite(batch, { ordered: true });
        counts.inserted += result.upsertedCount;
        counts.updated += result.modifiedCount;
        counts.unchanged += result.matchedCount - result.modifiedCount;
      }
      return counts;
    } catch (error) {
      await this.undoUpserts(planned, before);
      throw translateError(error, this.name);
    }
  }

  /** The documents the keys name now, by canonical key, read in one query. */
  private async documentsByKey(keys: ReadonlyArray<Record<string, unknown>>): Promise<Map<string, Doc>> {
    const found = await this.run(() => this.collection.find((keys.length === 1 ? keys[0]! : { $or: keys }) as DriverFilter<Doc>).toArray());
    const fieldSets = new Map(keys.map((key) => [fieldSetOf(key), Object.keys(key)]));
    const byKey = new Map<string, Doc>();
    for (const document of found) {
      for (const fields of fieldSets.values())
        byKey.set(
          canonicalKey(fields, (path) => valueAt(document, path)),
          document,
        );
    }
    return byKey;
  }

  /** Deletes what the failed bulk inserted and puts back the `set` fields of what it updated. */
  private async undoUpserts(
    planned: ReadonlyArray<{ key: Record<string, unknown>; set: Record<string, unknown>; insertId: DocId }>,
    before: Map<string, Doc>,
  ): Promise<void> {
    const undo: AnyBulkWriteOperation<Doc>[] = [];
    const restored = new Set<DocId>();
    for (const row of planned) {
      const prior = before.get(canonicalKey(Object.keys(row.key), (path) => row.key[path]));
      if (!prior) {
        undo.push({ deleteOne: { filter: { _id: row.insertId } } });
        continue;
      }
      if (restored.has(prior._id)) continue;
      restored.add(prior._id);
      const restore: Record<string, unknown> = {};
      const remove: Record<string, ''> = {};
      for (const path of Object.keys(row.set)) {
        const value = valueAt(prior, path);
        if (value === undefined) remove[path] = '';
        else restore[path] = value;
      }
      const update: Record<string, unknown> = {};
      if (Object.keys(restore).length > 0) update['$set'] = restore;
      if (Object.keys(remove).length > 0) update['$unset'] = remove;
      if (Object.keys(update).length > 0) undo.push({ updateOne: { filter: { _id: prior._id }, update: update as UpdateFilter<Doc> } });
    }
    for (const batch of batches(undo, this.store.traits.maxUpdateStatements)) {
      await this.run(() => this.collection.bulkWrite(batch, { ordered: false }));
    }
  }

  private run<R>(operation: () => Promise<R>): Promise<R> {
    return run(operation, this.name);
  }

  async deleteOne(filter: Filter): Promise<number> {
    return (await this.run(() => this.collection.deleteOne(filter as DriverFilter<Doc>))).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    return (await this.run(() => this.collection.deleteMany(filter as DriverFilter<Doc>))).deletedCount;
  }
}

/** Whether a filter's `_id` condition names one id, which MongoDB then gives the upserted document. */
function isIdEquality(condition: unknown): boolean {
  if (typeof condition === 'string' || typeof condition === 'number') return true;
  if (condition === null || typeof condition !== 'object') return false;
  const operators = Object.keys(condition);
  return operators.length === 1 && operators[0] === '$eq';
}

/** One batch holding everything unless the server needs smaller update commands. */
function batches<T>(items: T[], size: number): T[][] {
  if (items.length <= size) return [items];
  const sliced: T[][] = [];
  for (let offset = 0; offset < items.length; offset += size) sliced.push(items.slice(offset, offset + size));
  return sliced;
}

function sortOf(sort: Sort | undefined): Array<[string, 1 | -1]> | undefined {
  return sort && sort.length > 0 ? sort.map(([field, direction]) => [field, direction]) : undefined;
}

function fieldSetOf(key: Record<string, unknown>): string {
  return Object.keys(key).sort().join('\u0000');
}

/** Equal for a document and a key exactly when the key's equality filter matches the document (missing reads as null). */
function canonicalKey(fields: readonly string[], valueOf: (path: string) => unknown): string {
  return JSON.stringify([...fields].sort().map((path) => [path, valueOf(path) ?? null]));
}

function valueAt(document: unknown, path: string): unknown {
  let current = document;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** How many documents an ordered insertMany wrote before it failed. */
function insertedBeforeFailure(error: unknown): number {
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    const firstFailed = writeErrors.map((writeError) => writeError?.index).find((index) => typeof index === 'number');
    return firstFailed ?? error.insertedCount;
  }
  return 0;
}

const DUPLICATE_KEY_CODES = new Set([11000, 11001, 12582]);
const INVALID_REQUEST_CODES = new Set([2, 9, 14, 40, 52, 66, 67, 85, 86]);

function isDuplicateKey(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number' && DUPLICATE_KEY_CODES.has(code)) return true;
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (writeErrors.some((writeError) => writeError && DUPLICATE_KEY_CODES.has(writeError.code))) return true;
  }
  // FerretDB's SQLite backend reports a unique index clash on update as InternalError (code 1).
  return /E11000|duplicate key|UNIQUE constraint failed/.test(error.message);
}

/** Maps a driver or server error to the domain error callers handle. */
export function translateError(error: unknown, collection?: string): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isDuplicateKey(error)) {
    const index = /index: (\S+) dup key/.exec(message)?.[1];
    const where = `${collection ? ` in ${collection}` : ''}${index ? ` for unique index ${index}` : ''}`;
    return new ConflictError(`Duplicate key${where}.`, { ...(collection ? { collection } : {}), ...(index ? { index } : {}) });
  }
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  ) {
    return new AppError('unavailable', `MongoDB unavailable: ${message}`);
  }
  if (error instanceof MongoServerError && typeof error.code === 'number' && INVALID_REQUEST_CODES.has(error.code)) {
    return new AppError('invalid_argument', `MongoDB rejected the request: ${message}`, { mongoCode: error.code });
  }
  const code = (error as { code?: unknown }).code;
  return new AppError('internal', `MongoDB error: ${message}`, typeof code === 'number' ? { mongoCode: code } : {});
}

async function run<R>(operation: () => Promise<R>, collection?: string): Promise<R> {
  try {
    return await operation();
  } catch (error) {
    throw translateError(error, collection);
  }
}
