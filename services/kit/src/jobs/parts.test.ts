import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../errors';
import { createLogger } from '../log';
import { openStore } from '../store/index';
import type { Store } from '../store/store';
import type { Delivery } from '../bus/bus';
import { REPLAY_HEADER } from '../bus/common';
import { partCollection, partEvent, PartLedger, partReportId, type PartRecord, type PartTask } from './parts';

interface Outcome {
  written: number;
  failed: number;
}

/** A delivery with the bus's verdict on a failure, as the adapters attach it. */
const delivery = (deadLetters: boolean): Delivery =>
  Object.defineProperty({ messageId: 'm', deliveryCount: 1 }, 'willDeadLetter', { value: () => deadLetters });

describe('job engine: the part ledger', () => {
  let dir: string;
  let store: Store;
  let ledger: PartLedger<Outcome>;
  let runs: number;
  let reports: Array<PartRecord<Outcome>>;
  let recorded: number;

  const task = (run: () => Promise<Outcome>): PartTask<Outcome> => ({
    job: 12,
    part: 'chunk-0',
    kind: 'test_job',
    run: async () => {
      runs++;
      return run();
    },
    failed: async (_err, reason) => ({ written: 0, failed: reason.length > 0 ? 10 : 0 }),
    report: async (record) => void reports.push(record),
    recorded: async () => void recorded++,
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parts-'));
    store = await openStore({ database: 'parts', dataDir: dir });
    ledger = new PartLedger(await store.collection<PartRecord<Outcome>>(partCollection('test_parts')), { logger: createLogger('silent') });
    runs = 0;
    reports = [];
    recorded = 0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a part once, records its outcome, and reports the recorded outcome on every later delivery', async () => {
    const work = task(async () => ({ written: 10, failed: 0 }));
    await ledger.settle(work, delivery(false));
    await ledger.settle(
      task(async () => ({ written: 999, failed: 0 })),
      delivery(false),
    );
    assert.equal(runs, 1, 'a redelivery does not run the part again');
    assert.deepEqual(
      reports.map((r) => [r.state, r.outcome, r.revision]),
      [
        ['done', { written: 10, failed: 0 }, 0],
        ['done', { written: 10, failed: 0 }, 0],
      ],
      'and reports what the first attempt did',
    );
    assert.equal(recorded, 2);
    assert.equal(await ledger.settled(12), 1);
  });

  it('two deliveries at once record one outcome: the first to record wins and both report it', async () => {
    let n = 0;
    await Promise.all(
      [0, 1].map(() =>
        ledger.settle(
          task(async () => ({ written: ++n, failed: 0 })),
          delivery(false),
        ),
      ),
    );
    assert.equal(reports.length, 2);
    assert.deepEqual(reports[0]!.outcome, reports[1]!.outcome);
    assert.equal((await ledger.list(12)).length, 1);
  });

  it('throws a failure the bus retries, recording nothing; records, reports and still throws one it dead-letters', async () => {
    const down = () => task(async () => Promise.reject(new AppError('unavailable', 'transactional is down')));
    await assert.rejects(ledger.settle(down(), delivery(false)), /transactional is down/);
    assert.deepEqual([reports.length, await ledger.settled(12)], [0, 0]);
    await assert.rejects(ledger.settle(down(), delivery(true)), /transactional is down/);
    const [record] = reports;
    assert.deepEqual(
      [record!.state, record!.outcome, record!.reason],
      ['failed', { written: 0, failed: 10 }, 'a service it depends on stayed unavailable for the whole outage window'],
    );
    assert.equal(recorded, 1, 'the owner may finish its job on a failed part too');
  });

  it('an operator replay runs a failed part again under the next revision, replacing its outcome; a done part is not run again', async () => {
    await assert.rejects(
      ledger.settle(
        task(async () => Promise.reject(new Error('poison'))),
        delivery(true),
      ),
      /poison/,
    );
    const replay = { headers: { [REPLAY_HEADER]: '1' } };
    await ledger.settle(
      task(async () => ({ written: 10, failed: 0 })),
      delivery(false),
      replay,
    );
    const record = (await ledger.find(12, 'chunk-0'))!;
    assert.deepEqual(
      [record.state, record.revision, record.outcome, record.replaced, record.reason],
      ['done', 1, { written: 10, failed: 0 }, { written: 0, failed: 10 }, null],
    );
    const event = partEvent(record, { job_id: 7, tenant: 'demo' }, (o) => ({
      processed: 10,
      result: { created: o.written, failed: o.failed },
    }));
    assert.deepEqual(event, {
      type: 'part',
      job_id: 7,
      tenant: 'demo',
      part: 'chunk-0',
      processed: 10,
      result: { created: 10, failed: 0 },
      revision: 1,
      replaces: { processed: 10, result: { created: 0, failed: 10 } },
    });
    assert.equal(partReportId(record), 'part:12:chunk-0:1');
    const before = runs;
    await ledger.settle(
      task(async () => ({ written: 1, failed: 0 })),
      delivery(false),
      { headers: { [REPLAY_HEADER]: '2' } },
    );
    assert.equal(runs, before, 'a replay of a part that is done reports it again without running it');
  });
});
