import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@supply/kit';
import { CHUNK_ROWS, chunkId, discardUpload, keepFirstPlan, openStaging, stagedChunks, Stager, type Staging } from './staging';

describe('sync staging', () => {
  let dir: string;
  let store: Store;
  let staging: Staging;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'supply-sync-staging-'));
    store = await openStore({ database: 'workflows', dataDir: dir });
    staging = await openStaging(store);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function stage(rows: number): Promise<Stager> {
    const stager = new Stager(staging, 'demo');
    await stager.begin();
    for (let i = 0; i < rows; i++) await stager.add({ n: i });
    return stager;
  }

  it('writes rows in chunks of CHUNK_ROWS as they arrive, each knowing the load position of its first row', async () => {
    const rows = 2 * CHUNK_ROWS + 7;
    const stager = await stage(rows);
    // Two full chunks are in the store before the load has ended.
    assert.equal(await staging.chunks.count({ upload: stager.upload }), 2);
    const upload = await staging.uploads.findById(stager.upload);
    assert.equal(upload?.state, 'receiving');
    assert.equal(upload?.tenant, 'demo');

    assert.deepEqual(await stager.finish(), { rows, chunks: 3 });
    const finished = await staging.uploads.findById(stager.upload);
    assert.equal(finished?.rows, rows);
    assert.equal(finished?.chunks, 3);

    const chunks = [];
    for await (const chunk of stagedChunks(staging, stager.upload, 3)) chunks.push(chunk);
    assert.deepEqual(
      chunks.map((c) => [c._id, c.seq, c.first_row, c.rows.length]),
      [
        [chunkId(stager.upload, 0), 0, 0, CHUNK_ROWS],
        [chunkId(stager.upload, 1), 1, CHUNK_ROWS, CHUNK_ROWS],
        [chunkId(stager.upload, 2), 2, 2 * CHUNK_ROWS, 7],
      ],
    );
    // Every row once, in the order sent.
    assert.deepEqual(
      chunks.flatMap((c) => c.rows.map((r) => (r as { n: number }).n)),
      Array.from({ length: rows }, (_, i) => i),
    );
  });

  it('a load of exactly one chunk leaves no empty chunk behind', async () => {
    const stager = await stage(CHUNK_ROWS);
    assert.deepEqual(await stager.finish(), { rows: CHUNK_ROWS, chunks: 1 });
    assert.equal(await staging.chunks.count({ upload: stager.upload }), 1);
  });

  it('keeps the first plan of a chunk: a redelivery that planned otherwise gets the first one back', async () => {
    const stager = await stage(3);
    await stager.finish();
    const id = chunkId(stager.upload, 0);
    const first = await keepFirstPlan(staging, {
      _id: id,
      upload: stager.upload,
      outcomes: ['create', 'update', 'invalid'],
      errors: [{ row: 2, field: 'data.2.quantity', message: 'bad' }],
      errors_count: 1,
    });
    assert.deepEqual(first.outcomes, ['create', 'update', 'invalid']);
    const second = await keepFirstPlan(staging, {
      _id: id,
      upload: stager.upload,
      outcomes: ['unchanged', 'unchanged', 'invalid'],
      errors: [],
      errors_count: 0,
    });
    assert.deepEqual(second.outcomes, ['create', 'update', 'invalid']);
    assert.equal(second.errors_count, 1);
    assert.equal(await staging.plans.count({ upload: stager.upload }), 1);
  });

  it('discards an upload with its chunks and plans, and nothing of another upload', async () => {
    const gone = await stage(CHUNK_ROWS + 1);
    await gone.finish();
    await keepFirstPlan(staging, { _id: chunkId(gone.upload, 0), upload: gone.upload, outcomes: [], errors: [], errors_count: 0 });
    const kept = await stage(2);
    await kept.finish();
    await keepFirstPlan(staging, { _id: chunkId(kept.upload, 0), upload: kept.upload, outcomes: [], errors: [], errors_count: 0 });

    await discardUpload(staging, gone.upload);
    assert.equal(await staging.uploads.findById(gone.upload), null);
    assert.equal(await staging.chunks.count({ upload: gone.upload }), 0);
    assert.equal(await staging.plans.count({ upload: gone.upload }), 0);
    assert.ok(await staging.uploads.findById(kept.upload));
    assert.equal(await staging.chunks.count({ upload: kept.upload }), 1);
    assert.equal(await staging.plans.count({ upload: kept.upload }), 1);
  });
});
