import assert from 'node:assert/strict';
import { endStalled, foldJobEvent, mergeErrors, type JobEvent } from './fold';
import { ZERO_COUNTS, type JobDoc, type SyncState } from './repository';

const NOW = '2030-01-01T00:00:00.000000Z';

function job(sync: Partial<SyncState> | null = null, total = 2500): JobDoc {
  return {
    _id: 7,
    tenant: 'demo',
    kind: sync ? 'sales_sync' : 'forecast_run',
    status: 'queued',
    token_id: 1,
    user_id: 1,
    progress: { processed: 0, total },
    result: { ...ZERO_COUNTS },
    errors: [],
    errors_count: 0,
    message: null,
    created_at: NOW,
    updated_at: NOW,
    started_at: null,
    finished_at: null,
    version: 0,
    parts: [],
    sync: sync && {
      entity: 'sales',
      mode: 'upsert',
      scope: null,
      scope_ids: null,
      options: { allow_record_creation: true, allow_record_update: true, continue_on_error: true },
      rows_path: 'data',
      upload: 'u',
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
      ...sync,
    },
  };
}

function fold(start: JobDoc, events: JobEvent[]): JobDoc {
  return events.reduce((j, e) => foldJobEvent(j, e, NOW) ?? j, start);
}

const applied = (seq: number, rows: number, result: Partial<typeof ZERO_COUNTS> = {}): JobEvent => ({
  job_id: 7,
  tenant: 'demo',
  type: 'chunk_applied',
  seq,
  rows,
  result: { ...ZERO_COUNTS, created: rows, ...result },
  errors: [],
  errors_count: 0,
});

describe('job events fold', () => {
  it('counts each chunk once, however often its event comes', () => {
    const first = foldJobEvent(job({}), applied(0, 1000), NOW)!;
    assert.equal(first.status, 'running');
    assert.equal(first.started_at, NOW);
    assert.equal(foldJobEvent(first, applied(0, 1000), NOW), null);
    const done = fold(first, [applied(1, 1000), applied(1, 1000), applied(2, 500)]);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.result, { ...ZERO_COUNTS, created: 2500 });
    assert.deepEqual(done.progress, { processed: 2500, total: 2500 });
    assert.equal(done.sync!.phase, 'done');
    assert.equal(foldJobEvent(done, applied(2, 500), NOW), null, 'a finished job takes no more events');
  });

  it('ends partially_succeeded when some rows failed, failed when none loaded', () => {
    const some = fold(job({}), [applied(0, 1000, { created: 990, failed: 10 }), applied(1, 1000), applied(2, 500)]);
    assert.equal(some.status, 'partially_succeeded');
    const none = fold(job({}), [
      applied(0, 1000, { created: 0, failed: 1000 }),
      applied(1, 1000, { created: 0, failed: 1000 }),
      applied(2, 500, { created: 0, failed: 500 }),
    ]);
    assert.equal(none.status, 'failed');
  });

  it('all or nothing: invalid rows end the job failed after validation, a clean load moves on to applying', () => {
    const validated = (seq: number, invalid: number): JobEvent => ({
      job_id: 7,
      tenant: 'demo',
      type: 'chunk_validated',
      seq,
      rows: 1000,
      invalid_rows: invalid,
      errors: [],
      errors_count: invalid,
    });
    const start = job({ phase: 'validating', dispatched: 'validating' });
    const failed = fold(start, [validated(0, 0), validated(1, 2), validated(2, 0)]);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.result, { ...ZERO_COUNTS, failed: 2 });
    assert.match(failed.message!, /2 of 2500 rows are invalid; nothing was loaded/);
    const clean = fold(start, [validated(0, 0), validated(1, 0), validated(2, 0)]);
    assert.equal(clean.status, 'running');
    assert.equal(clean.sync!.phase, 'applying');
    assert.equal(clean.sync!.dispatched, null);
    assert.equal(fold(clean, [applied(0, 1000), applied(1, 1000), applied(2, 500)]).status, 'succeeded');
  });

  it('replace deletes after every chunk applied, and not at all when a chunk failed', () => {
    const start = job({ mode: 'replace' });
    const deleting = fold(start, [applied(0, 1000), applied(1, 1000), applied(2, 500)]);
    assert.equal(deleting.sync!.phase, 'deleting');
    assert.equal(deleting.status, 'running');
    const done = fold(deleting, [
      { job_id: 7, tenant: 'demo', type: 'scope_deleted', deleted: 42 },
      { job_id: 7, tenant: 'demo', type: 'scope_deleted', deleted: 0 },
    ]);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result.deleted, 42);

    const lost: JobEvent = {
      job_id: 7,
      tenant: 'demo',
      type: 'chunk_failed',
      seq: 1,
      step: 'load',
      rows: 1000,
      message: 'Chunk 1 failed.',
    };
    const partial = fold(start, [applied(0, 1000), lost, applied(1, 1000), applied(2, 500)]);
    assert.equal(partial.status, 'partially_succeeded');
    assert.deepEqual(partial.result, { ...ZERO_COUNTS, created: 1500, failed: 1000 });
    assert.match(partial.message!, /Chunk 1 failed\. Nothing was deleted/);
  });

  it('names a dead-lettered chunk in errors[] with its first row and the reason', () => {
    const lost: JobEvent = {
      job_id: 7,
      tenant: 'demo',
      type: 'chunk_failed',
      seq: 2,
      step: 'load',
      rows: 1000,
      first_row: 2000,
      message:
        'Chunk 2 (rows 2000-2999) was not loaded: a service it depends on stayed unavailable for the whole outage window. It went to the dead-letter queue.',
    };
    const failed = fold(job({}), [lost]);
    assert.deepEqual(failed.errors, [{ row: 2000, field: 'chunk.2', message: lost.message }]);
    assert.equal(failed.errors_count, 1);
  });

  it('counts the rows a failed chunk did commit as written, only the rest as failed', () => {
    const lost: JobEvent = {
      job_id: 7,
      tenant: 'demo',
      type: 'chunk_failed',
      seq: 1,
      step: 'load',
      rows: 1000,
      first_row: 1000,
      message: 'x',
      committed: { created: 600, updated: 100 },
    };
    const done = fold(job({}), [applied(0, 1000), lost, applied(2, 500)]);
    assert.equal(done.status, 'partially_succeeded');
    assert.deepEqual(done.result, { ...ZERO_COUNTS, created: 2100, updated: 100, failed: 300 });
    assert.equal(done.progress.processed, 2500);
  });

  it('keeps the first 1000 errors by row, whatever order chunks report them in', () => {
    const errs = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ row: from + i, field: `data.${from + i}.quantity`, message: 'x' }));
    const kept = mergeErrors(mergeErrors([], errs(1500, 600)), errs(0, 600));
    assert.equal(kept.length, 1000);
    assert.equal(kept[0]!.row, 0);
    assert.equal(kept[999]!.row, 1899);
  });

  it('takes events from other services: started, parts counted once, finished', () => {
    const ext = (e: object) => ({ job_id: 7, tenant: 'demo', ...e }) as JobEvent;
    const j = fold(job(null, 0), [
      ext({ type: 'started', total: 3 }),
      ext({ type: 'part', part: 'series-1', processed: 2, result: { created: 2 } }),
      ext({ type: 'part', part: 'series-1', processed: 2, result: { created: 2 } }),
      ext({
        type: 'part',
        part: 'series-2',
        processed: 1,
        result: { failed: 1 },
        errors: [{ row: 2, field: 'item', message: 'no history' }],
        errors_count: 1,
      }),
    ]);
    assert.equal(j.status, 'running');
    assert.deepEqual(j.progress, { processed: 3, total: 3 });
    assert.equal(j.errors_count, 1);
    const done = foldJobEvent(j, ext({ type: 'finished', message: 'Forecasts written.' }), NOW)!;
    assert.equal(done.status, 'partially_succeeded');
    assert.equal(done.message, 'Forecasts written.');
    assert.equal(foldJobEvent(j, ext({ type: 'finished', status: 'failed' }), NOW)!.status, 'failed');
    assert.equal(foldJobEvent(j, { ...ext({ type: 'finished' }), tenant: 'acme' }, NOW), null, 'another tenant cannot touch the job');
  });

  it('a finished event that names its part count waits for the parts it announced, whatever the order', () => {
    const ext = (e: object) => ({ job_id: 7, tenant: 'demo', ...e }) as JobEvent;
    const early = fold(job(null, 0), [
      ext({ type: 'started', total: 3 }),
      ext({ type: 'part', part: 'chunk-0', processed: 1, result: { created: 1 } }),
      ext({ type: 'finished', status: 'partially_succeeded', message: 'Two of three.', parts: 3 }),
    ]);
    assert.equal(early.status, 'running', 'not finished before its parts');
    assert.equal(early.finished_at, null);
    const two = foldJobEvent(early, ext({ type: 'part', part: 'chunk-1', processed: 1, result: { failed: 1 } }), NOW)!;
    assert.equal(two.status, 'running');
    assert.equal(
      foldJobEvent(two, ext({ type: 'part', part: 'chunk-1', processed: 1 }), NOW),
      null,
      'a redelivered part does not count twice',
    );
    const done = foldJobEvent(two, ext({ type: 'part', part: 'chunk-2', processed: 1, result: { created: 1 } }), NOW)!;
    assert.deepEqual(
      [done.status, done.message, done.progress.processed, done.result.created, done.result.failed],
      ['partially_succeeded', 'Two of three.', 3, 2, 1],
    );
    assert.equal(done.finished_at, NOW);
    const derived = fold(job(null, 0), [
      ext({ type: 'finished', parts: 1 }),
      ext({ type: 'part', part: 'x', processed: 1, result: { created: 1 } }),
    ]);
    assert.equal(derived.status, 'succeeded', 'an unnamed status is derived from the counts when the last part lands');
    const all = fold(job(null, 0), [
      ext({ type: 'part', part: 'x', processed: 1, result: { created: 1 } }),
      ext({ type: 'finished', parts: 1 }),
    ]);
    assert.equal(all.status, 'succeeded', 'every part already counted: finished at once');
  });

  it('counts a part that arrives after finished, and lets a derived status follow it', () => {
    const ext = (e: object) => ({ job_id: 7, tenant: 'demo', ...e }) as JobEvent;
    const early = fold(job(null, 0), [
      ext({ type: 'started', total: 2 }),
      ext({ type: 'part', part: 'a', processed: 1, result: { created: 1 } }),
      ext({ type: 'finished' }),
    ]);
    assert.equal(early.status, 'succeeded');
    const late = foldJobEvent(early, ext({ type: 'part', part: 'b', processed: 1, result: { failed: 1 } }), NOW)!;
    assert.deepEqual([late.status, late.progress.processed, late.result.failed], ['partially_succeeded', 2, 1]);
    assert.equal(
      foldJobEvent(late, ext({ type: 'part', part: 'b', processed: 1, result: { failed: 1 } }), NOW),
      null,
      'still counted once',
    );
    const named = fold(job(null, 0), [
      ext({ type: 'finished', status: 'failed' }),
      ext({ type: 'part', part: 'c', processed: 1, result: { created: 1 } }),
    ]);
    assert.deepEqual([named.status, named.result.created], ['failed', 1], 'a reported status stays');
  });

  it('a replayed part replaces what was counted for it, once per revision, and the finished status follows', () => {
    const ext = (e: object) => ({ job_id: 7, tenant: 'demo', ...e }) as JobEvent;
    const lost = { row: 10, field: 'item_customer_group_id', message: 'chunk-1 failed' };
    const failedPart = { processed: 10, result: { failed: 10 }, errors: [lost], errors_count: 1 };
    const done = fold(job(null, 0), [
      ext({ type: 'started', total: 20 }),
      ext({ type: 'part', part: 'chunk-0', processed: 10, result: { created: 10 } }),
      ext({ type: 'part', part: 'chunk-1', ...failedPart }),
      ext({ type: 'finished', status: 'partially_succeeded', message: 'Half.', parts: 2 }),
    ]);
    assert.deepEqual([done.status, done.result.created, done.result.failed, done.errors_count], ['partially_succeeded', 10, 10, 1]);
    const replay = ext({ type: 'part', part: 'chunk-1', processed: 10, result: { created: 10 }, revision: 1, replaces: failedPart });
    const replayed = foldJobEvent(done, replay, NOW)!;
    assert.deepEqual(
      [
        replayed.status,
        replayed.progress.processed,
        replayed.result.created,
        replayed.result.failed,
        replayed.errors_count,
        replayed.errors,
      ],
      ['succeeded', 20, 20, 0, 0, []],
    );
    assert.match(replayed.message!, /^Half\. Part chunk-1 was replayed \(revision 1\): 10 created\.$/);
    assert.equal(foldJobEvent(replayed, replay, NOW), null, 'a redelivered revision counts once');
    const first = fold(job(null, 0), [ext({ type: 'finished', parts: 1 }), replay]);
    assert.deepEqual(
      [first.status, first.result.created, first.result.failed],
      ['succeeded', 10, 0],
      'a part never counted: its revision is its first count',
    );
    assert.equal(
      foldJobEvent(first, ext({ type: 'part', part: 'chunk-1', ...failedPart }), NOW),
      null,
      'and its late first report is not counted too',
    );
  });
});

describe('a job ended as stalled', () => {
  const CUTOFF = '2030-01-01T00:10:00.000000Z';
  const LATER = '2030-01-01T00:11:00.000000Z';

  it('is left alone if it moved after the cutoff or has finished', () => {
    assert.equal(endStalled({ ...job({}), updated_at: LATER }, CUTOFF, LATER, 660_000), null);
    const done = fold(job({}), [applied(0, 1000), applied(1, 1000), applied(2, 500)]);
    assert.equal(endStalled(done, '2099-01-01T00:00:00.000000Z', LATER, 660_000), null);
  });

  it('a replace says nothing was deleted; a late failed chunk moves only the rows it committed out of failed', () => {
    const started = fold(job({ mode: 'replace' }), [applied(0, 1000)]);
    const ended = endStalled(started, CUTOFF, LATER, 660_000)!;
    assert.equal(ended.status, 'partially_succeeded');
    assert.deepEqual(ended.result, { ...ZERO_COUNTS, created: 1000, failed: 1500 });
    assert.match(ended.message ?? '', /^Stalled: no part of this job was reported for 660 s .*Nothing was deleted/);
    const late = foldJobEvent(
      ended,
      {
        job_id: 7,
        tenant: 'demo',
        type: 'chunk_failed',
        seq: 1,
        step: 'load',
        rows: 1000,
        first_row: 1000,
        message: 'Chunk 1 was not loaded.',
        committed: { created: 400 },
      },
      LATER,
    )!;
    assert.deepEqual(late.result, { ...ZERO_COUNTS, created: 1400, failed: 1100 });
    assert.equal(late.progress.processed, 2000);
    assert.equal(
      foldJobEvent(
        late,
        { job_id: 7, tenant: 'demo', type: 'chunk_validated', seq: 2, rows: 500, invalid_rows: 0, errors: [], errors_count: 0 },
        LATER,
      ),
      null,
      'only load and apply reports count late',
    );
  });
});
