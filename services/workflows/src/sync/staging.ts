/**
 * Staged loads. Rows are written to the workflows store in chunks as they arrive (a JSON
 * body or a file stream), before the request is answered, so an accepted load survives a
 * crash and the bus only carries small "work on chunk n" messages. A chunk's plan (what
 * each of its rows does) is written once, before anything is applied, so a redelivered
 * chunk reports the counts of its first attempt.
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, partCollection, type Collection, type Doc, type PartRecord, type Store } from '@supply/kit';
import type { SyncStepOutcome } from '../jobs/fold';
import { timestamp, type RowErrorRecord } from '../jobs/repository';

/** Rows per chunk: one bus message, one name resolution and one transactional apply each. */
export const CHUNK_ROWS = 1000;

export interface UploadDoc extends Doc {
  _id: string;
  tenant: string;
  state: 'receiving' | 'committed';
  job_id: number | null;
  rows: number;
  chunks: number;
  /** Replace: the deletion count found before deleting, written once. */
  planned_deletes: number | null;
  /** A finished job whose chunks were dead-lettered keeps its rows until then, so an operator can replay them. */
  retain_until?: string;
  created_at: string;
  updated_at: string;
}

/** A staged chunk as the workers read it. */
export interface ChunkDoc extends Doc {
  _id: string;
  upload: string;
  seq: number;
  /** Load position of rows[0]. */
  first_row: number;
  /** JSON rows as sent, or a file's records (arrays of cells). */
  rows: unknown[];
  /** Rows (load positions) that repeat the key of an earlier row: [row, earlier row]. */
  duplicates?: Array<[number, number]>;
}

/**
 * A staged chunk as it is stored: its rows as one JSON text, so whatever shape a client sent
 * (a file's records are arrays of cells; a JSON row may nest arrays) is kept as it came, on
 * every store (some MongoDB-compatible servers refuse nested arrays), and read in one parse.
 */
export interface StoredChunkDoc extends Doc {
  _id: string;
  upload: string;
  seq: number;
  first_row: number;
  rows_json: string;
  duplicates?: Array<{ row: number; earlier: number }>;
}

function chunkOf(stored: StoredChunkDoc): ChunkDoc {
  const { rows_json, duplicates, ...rest } = stored;
  return {
    ...rest,
    rows: JSON.parse(rows_json) as unknown[],
    ...(duplicates && { duplicates: duplicates.map((d) => [d.row, d.earlier] as [number, number]) }),
  };
}

/** The staged chunk `seq` of an upload, or null when it is not there. */
export async function readChunk(staging: Staging, upload: string, seq: number): Promise<ChunkDoc | null> {
  const stored = await staging.chunks.findById(chunkId(upload, seq));
  return stored ? chunkOf(stored) : null;
}

/** Marks rows of a staged chunk as repeating earlier rows' keys: [row, earlier row]. */
export async function markChunkDuplicates(staging: Staging, id: string, duplicates: Array<[number, number]>): Promise<void> {
  await staging.chunks.updateOne({ _id: id }, { $set: { duplicates: duplicates.map(([row, earlier]) => ({ row, earlier })) } });
}

/** What each row of a chunk does, decided before the chunk is applied. */
export type RowOutcome = 'invalid' | 'create' | 'update' | 'unchanged';

export interface PlanDoc extends Doc {
  _id: string;
  upload: string;
  outcomes: RowOutcome[];
  errors: RowErrorRecord[];
  errors_count: number;
  created_at: string;
}

export interface Staging {
  uploads: Collection<UploadDoc>;
  chunks: Collection<StoredChunkDoc>;
  plans: Collection<PlanDoc>;
  /** The part ledger of sync jobs: each chunk step's outcome, recorded once. */
  parts: Collection<PartRecord<SyncStepOutcome>>;
}

export async function openStaging(store: Store): Promise<Staging> {
  const [uploads, chunks, plans, parts] = await Promise.all([
    store.collection<UploadDoc>({
      name: 'sync_uploads',
      indexes: [
        {
          name: 'state_updated',
          keys: [
            ['state', 1],
            ['updated_at', 1],
          ],
        },
        { name: 'retain_until', keys: [['retain_until', 1]] },
      ],
    }),
    store.collection<StoredChunkDoc>({
      name: 'sync_chunks',
      indexes: [
        {
          name: 'upload_seq',
          keys: [
            ['upload', 1],
            ['seq', 1],
          ],
        },
      ],
    }),
    store.collection<PlanDoc>({ name: 'sync_plans', indexes: [{ name: 'upload', keys: [['upload', 1]] }] }),
    store.collection<PartRecord<SyncStepOutcome>>(partCollection('sync_parts')),
  ]);
  return { uploads, chunks, plans, parts };
}

export const chunkId = (upload: string, seq: number) => `${upload}:${seq}`;

/** Writes rows into chunk documents as they come; `add` waits for the store, which paces the sender. */
export class Stager {
  readonly upload = randomUUID();
  private pending: unknown[] = [];
  private seq = 0;
  rows = 0;

  constructor(
    private readonly staging: Staging,
    private readonly tenant: string,
  ) {}

  async begin(): Promise<void> {
    const now = timestamp();
    await this.staging.uploads.insertOne({
      _id: this.upload,
      tenant: this.tenant,
      state: 'receiving',
      job_id: null,
      rows: 0,
      chunks: 0,
      planned_deletes: null,
      created_at: now,
      updated_at: now,
    });
  }

  async add(row: unknown): Promise<void> {
    this.pending.push(row);
    this.rows++;
    if (this.pending.length >= CHUNK_ROWS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    const seq = this.seq++;
    await this.staging.chunks.insertOne({
      _id: chunkId(this.upload, seq),
      upload: this.upload,
      seq,
      first_row: this.rows - rows.length,
      rows_json: JSON.stringify(rows),
    });
  }

  /** Flushes the last chunk and records the upload's size. */
  async finish(): Promise<{ rows: number; chunks: number }> {
    await this.flush();
    await this.staging.uploads.updateOne({ _id: this.upload }, { $set: { rows: this.rows, chunks: this.seq, updated_at: timestamp() } });
    return { rows: this.rows, chunks: this.seq };
  }
}

/** Every chunk of an upload in order, one at a time. */
export async function* stagedChunks(staging: Staging, upload: string, chunks: number): AsyncIterable<ChunkDoc> {
  for (let seq = 0; seq < chunks; seq++) {
    const chunk = await readChunk(staging, upload, seq);
    if (chunk) yield chunk;
  }
}

/** Deletes an upload with its chunks, plans and part records. */
export async function discardUpload(staging: Staging, upload: string): Promise<void> {
  const doc = await staging.uploads.findById(upload);
  await staging.chunks.deleteMany({ upload });
  await staging.plans.deleteMany({ upload });
  if (doc?.job_id != null) await staging.parts.deleteMany({ job: String(doc.job_id) });
  await staging.uploads.deleteOne({ _id: upload });
}

/** Stores a chunk's plan unless one is there already; returns the one that counts (the first). */
export async function keepFirstPlan(
  staging: Staging,
  plan: Pick<PlanDoc, 'upload' | 'outcomes' | 'errors' | 'errors_count'> & { _id: string },
): Promise<PlanDoc> {
  try {
    return await staging.plans.insertOne({ ...plan, created_at: timestamp() });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    const first = await staging.plans.findById(plan._id);
    if (!first) throw err;
    return first;
  }
}
