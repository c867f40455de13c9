// Jobs that end: with a short OUTAGE_WINDOW_MS, a job whose parts never report (its worker
// gone, its chunk messages lost) is ended by the workflows sweeper with a stable reason,
// never left running, and its counts still match the store.
import assert from 'node:assert/strict';
import type { Bus, PrincipalContext } from '@supply/kit';
import { CHUNKS_QUEUE } from '@supply/workflows';
import { api, startSystem, type TestSystem } from '../support/system';
import { busEnv, days, dropBusNamespace, salesRecords, salesRow, waitForJob } from './workflows-support';

const WINDOW_MS = 2_000;
/** The window plus its grace (as long again, for short windows) plus a sweep or two. */
const ENDS_WITHIN_MS = 2 * WINDOW_MS + 5_000;
const STALLED = /^Stalled: no part of this job was reported/;

describe('jobs: a job whose parts stop moving ends (OUTAGE_WINDOW_MS=2000)', function () {
  this.timeout(60_000);
  const bus = busEnv();
  let sys: TestSystem;
  let token: string;
  let principal: PrincipalContext;

  before(async () => {
    sys = await startSystem({ env: { ...bus, OUTAGE_WINDOW_MS: String(WINDOW_MS) } });
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, { context: { requestId: 'test', tenant: 'demo' } });
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    const p = await sys.clients.tokens.authenticate({ token }, { context: { requestId: 'test', tenant: 'demo' } });
    principal = { tenant: 'demo', tokenId: p.token_id, userId: p.user_id, scopes: p.scopes, isAdmin: p.is_admin };
  });
  after(async () => {
    await sys?.stop();
    await dropBusNamespace(bus);
  });

  it('a job registered by a worker that then dies is failed with the stalled reason', async () => {
    const created = await sys.clients.workflows.createJob(
      { kind: 'forecast_run', total: 3 },
      { context: { requestId: 'test', tenant: 'demo', principal } },
    );
    const t0 = Date.now();
    const job = await waitForJob(sys, 'demo', token, created.id, ENDS_WITHIN_MS + 10_000);
    const took = Date.now() - t0;
    assert.ok(took >= 2 * WINDOW_MS - 500, `ended after ${took} ms, before the window and its grace`);
    assert.equal(job.status, 'failed');
    assert.match(job.message, STALLED);
    const res = await api(sys, `/demo/api/v1/jobs/${created.id}`, { token });
    assert.equal(res.status, 200);
    assert.equal(res.body.data[0].status, 'failed');
    assert.deepEqual(
      res.body.data[0].errors.map((e: { field: string }) => e.field),
      ['job'],
    );
    assert.match(res.body.data[0].errors[0].message, STALLED);
  });

  it('a sync whose chunk messages are lost without a report ends failed, its rows counted failed, none stored', async () => {
    const live: Bus = await sys.proc.deps.bus();
    const send = live.send.bind(live);
    // Chunks go nowhere (a queue purged, a message lost): nothing will ever report them.
    live.send = ((queue: string, body: unknown, options?: object) =>
      queue === CHUNKS_QUEUE ? Promise.resolve() : send(queue, body, options as never)) as Bus['send'];
    let jobId: number;
    try {
      const rows = days('2041-05-01', 30).map((d, i) => salesRow(d, i + 1));
      const res = await api(sys, '/demo/api/v1/workflows/sync-sales', {
        method: 'POST',
        token,
        body: { mode: 'upsert', data: rows, options: { continue_on_error: true } },
      });
      assert.equal(res.status, 202, res.text);
      jobId = res.body.data[0].job_id;
      const job = await waitForJob(sys, 'demo', token, jobId, ENDS_WITHIN_MS + 10_000);
      assert.equal(job.status, 'failed');
      assert.match(job.message, STALLED);
      assert.deepEqual(job.result, { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 30 });
    } finally {
      live.send = send;
    }
    const stored = await salesRecords(sys.clients, 'demo', {
      customer_group_names: ['Retail'],
      sale_type_names: ['History'],
      sell_date_from: '2041-05-01',
      sell_date_to: '2041-05-30',
    });
    assert.equal(stored.length, 0, 'the job counts what the store holds');
  });
});
