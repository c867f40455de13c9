/**
 * The document store port. Each service opens its own database; every adapter
 * (embedded LMDB, MongoDB) means exactly what MongoDB means for the subset below.
 */

export type DocId = string | number;
export interface Doc {
  _id: DocId;
  [field: string]: unknown;
}

/**
 * Mongo-style filter subset: field equality (dotted paths allowed), and the operators
 * $eq $ne $in $nin $gt $gte $lt $lte $exists at field level, $and $or at top level.
 * Values are plain JSON scalars (string, number, boolean, null); dates travel as ISO strings.
 */
export type Filter = Record<string, unknown>;

/** Sort keys in order; ties should be broken by the caller adding `_id`. */
export type Sort = ReadonlyArray<readonly [field: string, direction: 1 | -1]>;

/** Mongo-style update subset: $set, $unset, $inc, $setOnInsert, $push, $max, $min. */
export type Update = Record<string, Record<string, unknown>>;

export interface IndexSpec {
  /** Stable name; an adapter creates the index once and keeps it. */
  name: string;
  keys: ReadonlyArray<readonly [field: string, direction: 1 | -1]>;
  unique?: boolean;
}

export interface CollectionSpec {
  name: string;
  indexes?: IndexSpec[];
  /** When true, insertOne/insertMany/bulkUpsert assign integer `_id`s from the collection's sequence. */
  autoIncrement?: boolean;
}

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  /** Only for small offset-paginated reference lists; transactional reads page by keyset. */
  skip?: number;
}

export interface UpsertRow<T> {
  /** Equality match on these fields; must be covered by a unique index for safety. */
  key: Partial<T>;
  /** Written on insert and on update. */
  set: Partial<T>;
  /** Written on insert only (never `_id` when the collection is autoIncrement). */
  setOnInsert?: Partial<T>;
}

export interface BulkUpsertResult {
  inserted: number;
  updated: number;
  /** Matched, and every `set` value already equal: nothing written. */
  unchanged: number;
}

export interface UpdateResult {
  matched: number;
  modified: number;
  upsertedId?: DocId;
}

export interface Collection<T extends Doc = Doc> {
  readonly name: string;
  /** Inserts one document; `_id` is assigned when absent and the collection is autoIncrement. A unique index clash throws ConflictError. */
  insertOne(doc: Omit<T, '_id'> & { _id?: DocId }): Promise<T>;
  /** All or nothing: on a unique clash nothing is written and ConflictError is thrown. */
  insertMany(docs: Array<Omit<T, '_id'> & { _id?: DocId }>): Promise<T[]>;
  findById(id: DocId): Promise<T | null>;
  findOne(filter: Filter, options?: { sort?: Sort }): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  /** Streams matches in sort order without holding them all in memory. */
  iterate(filter: Filter, options?: FindOptions): AsyncIterable<T>;
  count(filter: Filter): Promise<number>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  /** Atomic read-modify-write of one document; returns the document after the update (or null). */
  findOneAndUpdate(filter: Filter, update: Update, options?: { upsert?: boolean; sort?: Sort }): Promise<T | null>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  /** Upserts many rows by key in one call. Applying the same rows twice changes nothing the second time. */
  bulkUpsert(rows: ReadonlyArray<UpsertRow<T>>): Promise<BulkUpsertResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
}

export interface Store {
  /** Opens (creating if needed) a collection and ensures its indexes. */
  collection<T extends Doc = Doc>(spec: CollectionSpec): Promise<Collection<T>>;
  /**
   * Reserves `count` consecutive integers from the named sequence and returns the first.
   * Adapters reserve from the backend in blocks so most calls touch no disk.
   */
  allocateIds(sequence: string, count?: number): Promise<number>;
  /** Resolves when the backend answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** The owning service's database name, e.g. `tokens`. */
  database: string;
  /** `mongodb://...` selects MongoDB; absent selects the embedded store. */
  mongodbUrl?: string;
  /** MongoDB only: the database is `${databasePrefix}_${database}` (default prefix `supply`). */
  databasePrefix?: string;
  /** Embedded store root; the database lives in `${dataDir}/${database}`. */
  dataDir: string;
}
