import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, openBus, openStore, type Bus, type Clients, type Store } from '@supply/kit';
import { IdempotencyKeys } from '../idempotency/keys';
import { foldJobEvent, STALLED_REASON } from '../jobs/fold';
import { JobRecords } from '../jobs/records';
import { openJobs, timestamp, ZERO_COUNTS, type SyncState } from '../jobs/repository';
import { ChunkProcessor } from './chunks';
import { Dispatcher } from './dispatch';
import { ScopeLocks } from './scope-locks';
import { openStaging } from './staging';
import { stallAfterMs, Sweeper } from './sweeper';
import { ChunkWorker } from './worker';

const WINDOW_MS = 60_000;
const principal = { tenant: 'demo', tokenId: 1, userId: 1, scopes: ['*'], isAdmin: false };

const syncState = (over: Partial<SyncState> = {}): SyncState => ({
  entity: 'sales',
  mode: 'upsert',
  scope: null,
  scope_ids: null,
  options: { allow_record_creation: true, allow_record_update: true, continue_on_error: true },
  rows_path: 'data',
  upload: 'upload-1',
  chunks: 3,
  columns: null,
  phase: 'loading',
  dispatched: 'loading',
  validated: 0,
  invalid_rows: 0,
  applied: 0,
  failed_chunks: 0,
  failures: [],
  lock: null,
  cleaned: false,
  ...over,
});

describe('workflows sweeper: jobs that stop moving end (fake clock)', function () {
  this.timeout(30_000);
  let dir: string;
  let store: Store;
  let busStore: Store;
  let bus: Bus;
  let records: JobRecords;
  let sweeper: Sweeper;
  let clock: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sweeper-'));
    [store, busStore] = await Promise.all(['workflows', 'bus'].map((database) => openStore({ database, dataDir: dir })));
    bus = await openBus({ store: busStore, pollIntervalMs: 20 });
    const logger = createLogger('silent');
    const clients = {} as Clients;
    records = new JobRecords(await openJobs(store));
    const staging = await openStaging(store);
    const processor = new ChunkProcessor(clients);
    const dispatcher = new Dispatcher(bus, records, staging, await ScopeLocks.open(store), logger);
    const worker = new ChunkWorker(records.jobs, staging, processor, clients, bus, logger);
    clock = Date.now();
    sweeper = new Sweeper({
      jobs: records,
      staging,
      keys: await IdempotencyKeys.open(store),
      dispatcher,
      worker,
      bus,
      logger,
      outageWindowMs: WINDOW_MS,
      now: () => clock,
    });
  });

  afterEach(async () => {
    await bus.close();
    await Promise.all([store, busStore].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves a job alone until it has not moved for the outage window plus its grace, then ends it failed with a stable reason', async () => {
    const job = await records.create({ tenant: 'demo', kind: 'forecast_run', principal, total: 4 });
    assert.equal(stallAfterMs(WINDOW_MS), 2 * WINDOW_MS);
    clock += stallAfterMs(WINDOW_MS) - 1_000;
    await sweeper.sweep();
    assert.equal((await records.jobs.findById(job._id))!.status, 'queued', 'still within the window');

    clock += 2_000;
    await sweeper.sweep();
    const ended = (await records.jobs.findById(job._id))!;
    assert.equal(ended.status, 'failed');
    assert.ok(ended.message?.startsWith(STALLED_REASON), ended.message ?? '');
    assert.ok(ended.finished_at);
    assert.deepEqual(
      ended.errors.map((e) => e.field),
      ['job'],
    );
    assert.ok(ended.errors[0]!.message.startsWith(STALLED_REASON));
    assert.equal(ended.errors_count, 1);

    // A second sweep (or another process's) changes nothing.
    clock += stallAfterMs(WINDOW_MS);
    await sweeper.sweep();
    assert.equal((await records.jobs.findById(job._id))!.version, ended.version);
  });

  it('a job that moved recently is not ended; a sync counts its unprocessed rows failed, cleans up, and a late chunk still counts', async () => {
    const moving = await records.create({ tenant: 'demo', kind: 'forecast_run', principal, total: 1 });
    const sync = await records.create({ tenant: 'demo', kind: 'sales_sync', principal, total: 2500, sync: syncState() });
    await records.update(sync._id, (j) => ({
      ...j,
      status: 'running',
      progress: { processed: 1000, total: 2500 },
      result: { ...ZERO_COUNTS, created: 1000 },
      parts: ['a0'],
      sync: { ...j.sync!, applied: 1 },
    }));
    clock += stallAfterMs(WINDOW_MS) + 1_000;
    // The other job heard from a part just now (by the fake clock).
    await records.update(moving._id, (j) => ({ ...j, status: 'running', updated_at: timestamp(new Date(clock)) }));

    await sweeper.sweep();
    assert.equal((await records.jobs.findById(moving._id))!.status, 'running');
    const ended = (await records.jobs.findById(sync._id))!;
    assert.equal(ended.status, 'partially_succeeded', 'rows were loaded, so not all failed');
    assert.deepEqual(ended.result, { ...ZERO_COUNTS, created: 1000, failed: 1500 });
    assert.equal(ended.sync!.phase, 'done');
    assert.equal(ended.sync!.cleaned, true, 'staging and lock released like any finished sync');
    assert.match(ended.message ?? '', /1000 of 2500 rows processed/);

    // A chunk that was being applied when the job was ended reports: its rows move from failed to created.
    const late = foldJobEvent(
      ended,
      {
        job_id: sync._id,
        tenant: 'demo',
        type: 'chunk_applied',
        seq: 1,
        rows: 1000,
        result: { ...ZERO_COUNTS, created: 990, failed: 10 },
        errors: [],
        errors_count: 0,
      },
      timestamp(),
    )!;
    assert.deepEqual(late.result, { ...ZERO_COUNTS, created: 1990, failed: 510 });
    assert.equal(late.progress.processed, 2000);
    assert.equal(late.status, 'partially_succeeded');
    assert.match(late.message ?? '', /2000 of 2500 rows processed/);
    assert.equal(
      foldJobEvent(
        late,
        {
          job_id: sync._id,
          tenant: 'demo',
          type: 'chunk_applied',
          seq: 1,
          rows: 1000,
          result: { ...ZERO_COUNTS, created: 990 },
          errors: [],
          errors_count: 0,
        },
        timestamp(),
      ),
      null,
      'counted once',
    );
  });

  it('a stalled job that loaded nothing is failed; a late external part folds in but never makes it succeeded', async () => {
    const job = await records.create({ tenant: 'demo', kind: 'supply_plan_run', principal, total: 2 });
    clock += stallAfterMs(WINDOW_MS) + 1_000;
    await sweeper.endStalled();
    const ended = (await records.jobs.findById(job._id))!;
    assert.equal(ended.status, 'failed');
    const late = foldJobEvent(
      ended,
      { job_id: job._id, tenant: 'demo', type: 'part', part: 'batch-0', processed: 1, result: { created: 1 } },
      timestamp(),
    )!;
    assert.equal(late.status, 'partially_succeeded');
    assert.equal(late.progress.processed, 1);
    assert.ok(late.message?.startsWith(STALLED_REASON));
  });
});
