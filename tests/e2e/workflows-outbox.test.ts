// A sync accepted while the bus cannot take its chunks: the answer does not wait for the
// bus, the job record is the outbox (the sweeper sends the chunks once the bus takes them),
// and a retry with the same Idempotency-Key replays that job instead of loading again.
// The outage is made by patching the bus of the process under test, so it runs in the
// all-in-one system only: against separate processes the test's own bus connection is not the
// one workflows sends on. The fault suite (tests/faults/sync-faults.test.ts) makes the same
// outage between processes by cutting the broker itself.
import assert from 'node:assert/strict';
import type { Bus } from '@supply/kit';
import { skipBecause } from '../support/require';
import { DISTRIBUTED, api, startSystem, type TestSystem } from '../support/system';
import { days, readJob, salesRecords, salesRow, waitForJob } from './workflows-support';

const SALES = '/demo/api/v1/workflows/sync-sales';
const call = { context: { requestId: 'test', tenant: 'demo' } };

describe('workflows: a sync posted while the bus hangs', function () {
  this.timeout(90_000);
  let sys: TestSystem;
  let token: string;

  before(async function () {
    if (DISTRIBUTED)
      skipBecause(this, 'the outage patches the bus inside the process under test; the fault suite cuts the broker between processes');
    sys = await startSystem();
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
  });
  after(async () => {
    await sys?.stop();
  });

  it('answers 202 without waiting for the bus, keeps the key, and the sweeper runs the job once the bus is back', async () => {
    const bus: Bus = await sys.proc.deps.bus();
    const send = bus.send.bind(bus);
    // The broker as it looks during an outage: a send neither succeeds nor fails for a long time.
    bus.send = () => new Promise<void>(() => undefined);
    const rows = days('2039-03-01', 30).map((d, i) => salesRow(d, i + 1));
    const body = { mode: 'upsert', data: rows, options: { continue_on_error: true } };
    const headers = { 'Idempotency-Key': 'outbox-2039-03' };
    let jobId: number;
    try {
      const t0 = Date.now();
      const first = await api(sys, SALES, { method: 'POST', token, body, headers });
      assert.equal(first.status, 202, first.text);
      assert.ok(Date.now() - t0 < 8_000, `answered in ${Date.now() - t0} ms`);
      jobId = first.body.data[0].job_id;
      const again = await api(sys, SALES, { method: 'POST', token, body, headers });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.data[0].job_id, jobId, 'the retry replays the first job');
      assert.equal((await readJob(sys, 'demo', token, jobId)).status, 'queued');
    } finally {
      bus.send = send;
    }
    // The sweeper (every 15 s) finds the job's phase not on the bus and sends it.
    const job = await waitForJob(sys, 'demo', token, jobId, 60_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual(job.result, { created: 30, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    const stored = await salesRecords(sys.clients, 'demo', {
      customer_group_names: ['Retail'],
      sale_type_names: ['History'],
      sell_date_from: '2039-03-01',
      sell_date_to: '2039-03-30',
    });
    assert.equal(stored.length, 30);
  });
});
