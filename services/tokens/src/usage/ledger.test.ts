import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, openStore, type Store } from '@supply/kit';
import { UsageLedger } from './ledger';
import { creditPeriodByKey, type UsageBatch, type UsageRecord, type UsageTotal } from '@supply/contracts';
import { openUsageStore, type UsageStore } from './repository';

let sequence = 0;
function record(fields: Partial<UsageRecord> = {}): UsageRecord {
  sequence++;
  return {
    id: `r${sequence}`,
    request_id: `req-${sequence}`,
    tenant: 'demo',
    token_id: 1,
    method: 'GET',
    endpoint: '/uoms',
    cost: 1,
    status: 200,
    at: '2026-05-10T12:00:00.000Z',
    ...fields,
  };
}

const batch = (id: string, records: UsageRecord[]): UsageBatch => ({ id, records });

function total(fields: Partial<UsageTotal> = {}): UsageTotal {
  return {
    tenant: 'demo',
    day: '2026-05-10',
    method: 'GET',
    endpoint: '/uoms',
    token_id: 1,
    requests: 1,
    credits: 1,
    errors: 0,
    ...fields,
  };
}

describe('UsageLedger', function () {
  this.timeout(20_000);
  let dir: string;
  let store: Store;
  let usage: UsageStore;
  let ledger: UsageLedger;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'usage-ledger-'));
    store = await openStore({ database: 'tokens', dataDir: dir });
    usage = await openUsageStore(store);
    ledger = new UsageLedger(usage);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("folds a gateway's totals into the aggregates, keeps them whole, and counts a redelivery once", async () => {
    const b: UsageBatch = {
      id: 't1',
      totals: [
        total({ requests: 40, credits: 40, errors: 3 }),
        total({ endpoint: '/items', token_id: 2, requests: 2, credits: 2 }),
        total({ day: '2026-05-11', method: 'POST', endpoint: '/items', requests: 5, credits: 10 }),
        total({ tenant: 'acme', credits: 20 }),
      ],
    };
    assert.equal(await ledger.fold(b), true);
    assert.equal(await ledger.fold(structuredClone(b)), false);
    // A later batch adds to the same aggregates.
    assert.equal(await ledger.fold({ id: 't2', totals: [total({ requests: 2, credits: 0, errors: 2 })] }), true);
    assert.deepEqual(await ledger.report('demo', '2026-05-01', '2026-05-31', ['day', 'endpoint', 'token']), [
      { day: '2026-05-10', method: 'GET', endpoint: '/items', token_id: 2, requests: 2, credits: 2 },
      { day: '2026-05-10', method: 'GET', endpoint: '/uoms', token_id: 1, requests: 42, credits: 40 },
      { day: '2026-05-11', method: 'POST', endpoint: '/items', token_id: 1, requests: 5, credits: 10 },
    ]);
    assert.equal((await usage.days.findOne({ tenant: 'demo', endpoint: '/uoms' }))?.errors, 5);
    assert.equal(await ledger.used('acme', creditPeriodByKey('2026-05')!), 20);
    const stored = await usage.batches.findById('t1');
    assert.deepEqual(JSON.parse(stored!.totals_json!), b.totals);
    assert.equal(stored!.at, '2026-05-10T00:00:00.000Z');
    assert.equal(stored!.folded, true);
  });

  it('recovers a batch of totals stored but never marked folded, and prunes it by its earliest day', async () => {
    await usage.batches.insertOne({
      _id: 'lost',
      at: '2026-01-10T00:00:00.000Z',
      totals_json: JSON.stringify([total({ day: '2026-01-10', credits: 7 })]),
      folded: false,
    });
    assert.equal(await ledger.recover(), 1);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-01')!), 7);
    assert.equal(await ledger.prune(new Date('2026-01-10T00:00:00Z')), 0);
    assert.equal(await ledger.prune(new Date('2026-01-11T00:00:00Z')), 1);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-01')!), 7);
  });

  it('folds the per-request records of earlier gateways into per-day, endpoint and token aggregates and reports them grouped any way', async () => {
    await ledger.fold(
      batch('b1', [
        record(),
        record({ status: 404 }),
        record({ endpoint: '/items', cost: 1, token_id: 2 }),
        record({ method: 'POST', endpoint: '/items', cost: 2, at: '2026-05-11T00:00:00.000Z' }),
        record({ tenant: 'acme', cost: 20 }),
      ]),
    );
    assert.deepEqual(await ledger.report('demo', '2026-05-01', '2026-05-31', ['day', 'endpoint', 'token']), [
      { day: '2026-05-10', method: 'GET', endpoint: '/items', token_id: 2, requests: 1, credits: 1 },
      { day: '2026-05-10', method: 'GET', endpoint: '/uoms', token_id: 1, requests: 2, credits: 2 },
      { day: '2026-05-11', method: 'POST', endpoint: '/items', token_id: 1, requests: 1, credits: 2 },
    ]);
    assert.deepEqual(await ledger.report('demo', '2026-05-01', '2026-05-31', ['token']), [
      { day: null, method: null, endpoint: null, token_id: 1, requests: 3, credits: 4 },
      { day: null, method: null, endpoint: null, token_id: 2, requests: 1, credits: 1 },
    ]);
    assert.deepEqual(await ledger.report('demo', '2026-05-11', '2026-05-11', ['day']), [
      { day: '2026-05-11', method: null, endpoint: null, token_id: null, requests: 1, credits: 2 },
    ]);
    const uoms = await usage.days.findOne({ tenant: 'demo', endpoint: '/uoms' });
    assert.equal(uoms?.errors, 1);
    assert.deepEqual(await ledger.report('acme', '2026-05-01', '2026-05-31', []), [
      { day: null, method: null, endpoint: null, token_id: null, requests: 1, credits: 20 },
    ]);
  });

  it('sums the credits of one calendar month (UTC) only', async () => {
    await ledger.fold(
      batch('b1', [
        record({ at: '2026-04-30T23:59:59.999Z', cost: 100 }),
        record({ at: '2026-05-01T00:00:00.000Z', cost: 1 }),
        record({ at: '2026-05-31T23:59:59.999Z', cost: 2 }),
        record({ at: '2026-06-01T00:00:00.000Z', cost: 1000 }),
      ]),
    );
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-05')!), 3);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-04')!), 100);
    assert.equal(await ledger.used('acme', creditPeriodByKey('2026-05')!), 0);
  });

  it('counts a redelivered batch once', async () => {
    const b = batch('b1', [record(), record({ cost: 5 })]);
    assert.equal(await ledger.fold(b), true);
    assert.equal(await ledger.fold(b), false);
    assert.equal(await ledger.fold(structuredClone(b)), false);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-05')!), 6);
  });

  it('folds a batch cut short again without counting what it had counted', async () => {
    const b = batch('b1', [
      record({ endpoint: '/a', cost: 1 }),
      record({ endpoint: '/b', cost: 10 }),
      record({ endpoint: '/c', cost: 100 }),
    ]);
    const updateOne = usage.days.updateOne.bind(usage.days);
    let calls = 0;
    // The second aggregate write fails, as a store error or a crash mid-fold would leave it.
    usage.days.updateOne = async (...args) => {
      if (++calls === 2) throw new AppError('unavailable', 'store went away');
      return updateOne(...args);
    };
    await assert.rejects(ledger.fold(b));
    usage.days.updateOne = updateOne;
    assert.equal((await usage.batches.findById('b1'))?.folded, false);

    assert.equal(await ledger.fold(b), true);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-05')!), 111);
    assert.equal(await ledger.fold(b), false);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-05')!), 111);
  });

  it('recovers batches stored but never marked folded, in the stored form of today and of before', async () => {
    const records = [record({ cost: 7 }), record({ cost: 5, at: '2026-05-10T14:00:00+02:00' })];
    await usage.batches.insertOne({ _id: 'lost', at: '2026-05-10T12:00:00.000Z', records_json: JSON.stringify(records), folded: false });
    // A batch stored by an earlier version keeps its records as objects.
    await usage.batches.insertOne({ _id: 'older', at: '2026-05-10T12:00:00.000Z', records: [record({ cost: 100 })], folded: false });
    assert.equal(await ledger.recover(), 2);
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-05')!), 112);
    assert.equal(await ledger.recover(), 0);
  });

  it("keeps a batch's records whole, as they arrived, and counts each on its UTC day", async () => {
    const records = [
      record({ at: '2026-05-31T23:59:59.999Z' }),
      // Not the gateway's own form: read as an instant, 2026-05-31T23:30Z.
      record({ at: '2026-06-01T01:30:00+02:00', cost: 10 }),
      record({ at: '2026-06-01T00:00:00.000Z', cost: 100 }),
    ];
    await ledger.fold(batch('days', records));
    const stored = await usage.batches.findById('days');
    assert.deepEqual(JSON.parse(stored!.records_json!), records);
    assert.equal(stored!.folded, true);
    assert.deepEqual(await ledger.report('demo', '2026-05-01', '2026-06-30', ['day']), [
      { day: '2026-05-31', method: null, endpoint: null, token_id: null, requests: 2, credits: 11 },
      { day: '2026-06-01', method: null, endpoint: null, token_id: null, requests: 1, credits: 100 },
    ]);
  });

  it('prunes old folded batches and keeps the aggregates', async () => {
    await ledger.fold(batch('old', [record({ at: '2026-01-10T00:00:00.000Z', cost: 3 })]));
    await ledger.fold(batch('new', [record({ at: '2026-05-10T00:00:00.000Z', cost: 4 })]));
    assert.equal(await ledger.prune(new Date('2026-03-01T00:00:00Z')), 1);
    assert.deepEqual(
      (await usage.batches.find({})).map((b) => b._id),
      ['new'],
    );
    assert.equal(await ledger.used('demo', creditPeriodByKey('2026-01')!), 3);
  });
});
