/**
 * Idempotent bulk apply by a unique key, shared by sales and inventory rows: read what
 * exists for the rows' keys, decide each row's outcome, then write creates in one insert
 * and changes in one bulk upsert. A record whose mutable fields already hold the row's
 * values is left as it is (only its load mark moves), so applying a chunk twice reports
 * it unchanged the second time. With an apply id, every record the call writes carries
 * `applied_by: <id>|<outcome>`, so a repeat of the call (a redelivered chunk whose first
 * attempt committed all or part of it) reports the first attempt's outcomes for those
 * rows and writes nothing for them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ConflictError, ValidationError, type Collection, type Doc, type Filter, type UpsertRow } from '@supply/kit';
import { supply_transactional_v1 as pb } from '@supply/contracts';
import { compareScalars, type Scalar } from './keyset';

export interface ApplySpec<Row> {
  /** The unique key's fields after `tenant`, in index order; the last is a date the existing records are read by. */
  key: readonly string[];
  keyOf(row: Row): Record<string, Scalar>;
  /** The fields a match may change. */
  mutable(row: Row): Record<string, Scalar>;
  /** Every other field, written when the record is created. */
  fixed(row: Row): Record<string, Scalar>;
  /**
   * The whole record a row creates, as one object literal (spreading into a literal with
   * more fields is an order of magnitude slower in V8, and creates are the bulk of a load).
   */
  create(row: Row, stamp: Stamp): Record<string, Scalar>;
}

/** What every created record carries besides the row's fields. */
export interface Stamp {
  tenant: string;
  load_id: string;
  created_at: string;
  updated_at: string;
}

export interface ApplyOptions {
  tenant: string;
  /** Marks every record the call creates or matches; "" leaves marks as they are. */
  loadId: string;
  refuseCreates: boolean;
  refuseUpdates: boolean;
  dryRun: boolean;
  /** The call's timestamp (created_at / updated_at). */
  now: string;
  /** One id per unit of work; "" for none. */
  applyId?: string;
}

const OUTCOME_WORDS: Partial<Record<pb.ApplyOutcome, string>> = {
  [pb.ApplyOutcome.APPLY_OUTCOME_CREATED]: 'created',
  [pb.ApplyOutcome.APPLY_OUTCOME_UPDATED]: 'updated',
  [pb.ApplyOutcome.APPLY_OUTCOME_UNCHANGED]: 'unchanged',
};

/** The outcome an earlier call with `applyId` recorded on a record, or null if no such call wrote it. */
function earlierOutcome(found: Doc | undefined, applyId: string): pb.ApplyOutcome | null {
  const mark = found?.['applied_by'];
  if (!applyId || typeof mark !== 'string' || !mark.startsWith(`${applyId}|`)) return null;
  const word = mark.slice(applyId.length + 1);
  for (const [outcome, text] of Object.entries(OUTCOME_WORDS)) if (text === word) return Number(outcome) as pb.ApplyOutcome;
  return null;
}

/** Concurrent store reads while looking up existing records. */
const READ_CONCURRENCY = 32;
/** A concurrent writer may create a key between our read and insert: decide again, a few times. */
const ATTEMPTS = 3;

export async function applyRows<Row, D extends Doc>(
  collection: Collection<D>,
  spec: ApplySpec<Row>,
  rows: readonly Row[],
  options: ApplyOptions,
): Promise<pb.ApplyResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyOnce(collection, spec, rows, options);
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= ATTEMPTS) throw error;
    }
  }
}

async function applyOnce<Row, D extends Doc>(
  collection: Collection<D>,
  spec: ApplySpec<Row>,
  rows: readonly Row[],
  options: ApplyOptions,
): Promise<pb.ApplyResult> {
  const { tenant, loadId, now } = options;
  const applyId = options.applyId ?? '';
  const markOf = (outcome: pb.ApplyOutcome) => (applyId ? { applied_by: `${applyId}|${OUTCOME_WORDS[outcome]}` } : {});
  const keys = rows.map((row) => spec.keyOf(row));
  const texts = keys.map((key) => JSON.stringify(spec.key.map((field) => key[field])));
  const winner = new Map<string, number>();
  texts.forEach((text, i) => winner.set(text, i));
  const existing = await readExisting(
    collection,
    spec,
    tenant,
    [...winner.values()].map((i) => keys[i]!),
  );

  const stamp: Stamp = { tenant, load_id: loadId, created_at: now, updated_at: now };
  const result: pb.ApplyResult = {
    created: 0,
    updated: 0,
    unchanged: 0,
    rejected: 0,
    outcomes: [],
    already_created: 0,
    already_updated: 0,
    already_unchanged: 0,
  };
  const creates: Array<Record<string, unknown>> = [];
  const changes: Array<UpsertRow<D>> = [];
  rows.forEach((row, i) => {
    if (winner.get(texts[i]!) !== i) {
      result.outcomes.push(pb.ApplyOutcome.APPLY_OUTCOME_SUPERSEDED);
      return;
    }
    const key = { tenant, ...keys[i]! };
    const mutable = spec.mutable(row);
    const found = existing.get(texts[i]!);
    const earlier = earlierOutcome(found, applyId);
    let outcome: pb.ApplyOutcome;
    if (earlier !== null && Object.entries(mutable).every(([field, value]) => found![field] === value)) {
      outcome = earlier;
      if (earlier === pb.ApplyOutcome.APPLY_OUTCOME_CREATED) result.already_created++;
      else if (earlier === pb.ApplyOutcome.APPLY_OUTCOME_UPDATED) result.already_updated++;
      else result.already_unchanged++;
    } else if (!found) {
      outcome = options.refuseCreates ? pb.ApplyOutcome.APPLY_OUTCOME_REJECTED : pb.ApplyOutcome.APPLY_OUTCOME_CREATED;
      if (!options.refuseCreates) creates.push(applyId ? Object.assign(spec.create(row, stamp), markOf(outcome)) : spec.create(row, stamp));
    } else if (Object.entries(mutable).every(([field, value]) => found[field] === value)) {
      outcome = pb.ApplyOutcome.APPLY_OUTCOME_UNCHANGED;
      if (loadId && found['load_id'] !== loadId) {
        // Written in full on insert too, should the record vanish before this write.
        changes.push(
          upsert(
            key,
            { load_id: loadId, ...markOf(outcome) },
            Object.assign(spec.fixed(row), mutable, { created_at: now, updated_at: now }),
          ),
        );
      }
    } else if (options.refuseUpdates) {
      outcome = pb.ApplyOutcome.APPLY_OUTCOME_REJECTED;
    } else {
      outcome = pb.ApplyOutcome.APPLY_OUTCOME_UPDATED;
      const set = Object.assign({}, mutable, loadId ? { load_id: loadId } : {}, { updated_at: now }, markOf(outcome));
      changes.push(upsert(key, set, Object.assign(spec.fixed(row), { created_at: now }, loadId ? {} : { load_id: '' })));
    }
    result.outcomes.push(outcome);
    if (outcome === pb.ApplyOutcome.APPLY_OUTCOME_CREATED) result.created++;
    else if (outcome === pb.ApplyOutcome.APPLY_OUTCOME_UPDATED) result.updated++;
    else if (outcome === pb.ApplyOutcome.APPLY_OUTCOME_UNCHANGED) result.unchanged++;
    else result.rejected++;
  });
  if (options.dryRun) return result;
  // All or nothing: a key created meanwhile throws ConflictError before anything is written.
  if (creates.length > 0) await collection.insertMany(creates as Array<Omit<D, '_id'>>);
  if (changes.length > 0) await collection.bulkUpsert(changes);
  return result;
}

function upsert<D extends Doc>(
  key: Record<string, unknown>,
  set: Record<string, unknown>,
  setOnInsert: Record<string, unknown>,
): UpsertRow<D> {
  return { key: key as Partial<D>, set: set as Partial<D>, setOnInsert: setOnInsert as Partial<D> };
}

/**
 * The existing records for `keys`, by key text: one store read per key prefix (every key
 * field but the last), over the range of the last field's values, on the unique index.
 */
async function readExisting<D extends Doc>(
  collection: Collection<D>,
  spec: ApplySpec<unknown>,
  tenant: string,
  keys: ReadonlyArray<Record<string, Scalar>>,
): Promise<Map<string, D>> {
  const prefixFields = spec.key.slice(0, -1);
  const last = spec.key[spec.key.length - 1]!;
  const groups = new Map<string, { prefix: Record<string, Scalar>; values: Scalar[] }>();
  for (const key of keys) {
    const text = JSON.stringify(prefixFields.map((field) => key[field]));
    let group = groups.get(text);
    if (!group) {
      group = { prefix: Object.fromEntries(prefixFields.map((field) => [field, key[field]!])), values: [] };
      groups.set(text, group);
    }
    group.values.push(key[last]!);
  }
  const found = new Map<string, D>();
  const all = [...groups.values()];
  for (let start = 0; start < all.length; start += READ_CONCURRENCY) {
    const reads = all.slice(start, start + READ_CONCURRENCY).map(({ prefix, values }) => {
      const sorted = [...values].sort(compareScalars);
      const bound: unknown = sorted.length === 1 ? sorted[0] : { $gte: sorted[0], $lte: sorted[sorted.length - 1] };
      return collection.find({ tenant, ...prefix, [last]: bound } as Filter);
    });
    for (const documents of await Promise.all(reads)) {
      for (const document of documents) found.set(JSON.stringify(spec.key.map((field) => document[field])), document);
    }
  }
  return found;
}

/** Records per delete batch: with every index entry removed too, a batch stays within some tens of milliseconds. */
const DELETE_BATCH = 250;

/**
 * Replace mode: deletes the records matching `scope` whose load mark is not `loadId`, in
 * id order and in bounded batches (or only counts them on a dry run).
 */
export async function deleteOutsideLoad<D extends Doc>(
  collection: Collection<D>,
  scope: Filter,
  loadId: string,
  dryRun: boolean,
): Promise<number> {
  if (!loadId) throw new ValidationError({ load_id: ['The load id field is required.'] });
  const outside = { ...scope, load_id: { $ne: loadId } };
  let deleted = 0;
  let after = 0;
  for (;;) {
    // Other requests run between batches: an embedded store reads and writes on this thread.
    if (after !== 0) await nextTurn();
    const batch = await collection.find({ ...outside, _id: { $gt: after } }, { sort: [['_id', 1]], limit: DELETE_BATCH });
    if (batch.length === 0) return deleted;
    after = batch[batch.length - 1]!._id as number;
    // The mark is checked again: a record the load touched meanwhile stays.
    deleted += dryRun ? batch.length : await collection.deleteMany({ ...outside, _id: { $in: batch.map((record) => record._id) } });
  }
}
