// The job API other services use (compute's forecast and supply-plan runs): CreateJob over
// gRPC, then JobEvents on the `workflows.job-events` queue, read back through GET /jobs/{id}.
import assert from 'node:assert/strict';
import type { PrincipalContext } from '@supply/kit';
import { api, startSystem, type TestSystem } from '../support/system';
import { busEnv, dropBusNamespace } from './workflows-support';

const QUEUE = 'workflows.job-events';

describe('jobs: the internal job API', function () {
  this.timeout(60_000);
  const bus = busEnv();
  let sys: TestSystem;
  let token: string;
  let principal: PrincipalContext;

  const job = async (id: number, as = token) => api(sys, `/demo/api/v1/jobs/${id}`, { token: as });
  async function until(id: number, done: (j: any) => boolean): Promise<any> {
    for (let i = 0; i < 200; i++) {
      const res = await job(id);
      if (done(res.body.data[0])) return res.body.data[0];
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`job ${id} never got there`);
  }
  const send = async (event: object) => (await sys.proc.deps.bus()).send(QUEUE, event);

  before(async () => {
    sys = await startSystem({ env: bus });
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, { context: { requestId: 'test', tenant: 'demo' } });
    token = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.compute']);
    const p = await sys.clients.tokens.authenticate({ token }, { context: { requestId: 'test', tenant: 'demo' } });
    principal = { tenant: 'demo', tokenId: p.token_id, userId: p.user_id, scopes: p.scopes, isAdmin: p.is_admin };
  });
  after(async () => {
    await sys?.stop();
    await dropBusNamespace(bus);
  });

  it('CreateJob registers a queued job for the calling token; its events fold into GET /jobs/{id}', async () => {
    const created = await sys.clients.workflows.createJob(
      { kind: 'forecast_run', total: 0 },
      { context: { requestId: 'test', tenant: 'demo', principal } },
    );
    const initial = (await job(created.id)).body.data[0];
    assert.deepEqual(
      {
        status: initial.status,
        kind: initial.kind,
        progress: initial.progress,
        started_at: initial.started_at,
        finished_at: initial.finished_at,
        message: initial.message,
      },
      { status: 'queued', kind: 'forecast_run', progress: { processed: 0, total: 0 }, started_at: null, finished_at: null, message: null },
    );

    await send({ type: 'started', job_id: created.id, tenant: 'demo', total: 3 });
    const part = (name: string, result: object, errors: object[] = []) => ({
      type: 'part',
      job_id: created.id,
      tenant: 'demo',
      part: name,
      processed: 1,
      result,
      errors,
      errors_count: errors.length,
    });
    await send(part('series-1', { created: 52 }));
    await send(part('series-1', { created: 52 }));
    await send(part('series-2', { updated: 52 }));
    await send(part('series-3', { failed: 1 }, [{ row: 2, field: 'item_customer_group_id', message: 'No history to forecast from.' }]));
    const running = await until(created.id, (j) => j.progress.processed === 3);
    assert.equal(running.status, 'running');
    assert.deepEqual(running.result, { created: 52, updated: 52, deleted: 0, unchanged: 0, failed: 1 });
    assert.equal(running.errors_count, 1);
    assert.match(running.started_at, /Z$/);

    await send({ type: 'finished', job_id: created.id, tenant: 'demo', status: '', message: 'Forecasts written for 2 of 3 series.' });
    const finished = await until(created.id, (j) => j.finished_at !== null);
    assert.equal(finished.status, 'partially_succeeded');
    assert.equal(finished.message, 'Forecasts written for 2 of 3 series.');
    // A second `finished` changes nothing; a part that arrives late (events may overtake each
    // other) still counts once, and the status derived from the counts follows it.
    await send({ type: 'finished', job_id: created.id, tenant: 'demo', status: 'failed' });
    await send(part('series-1', { created: 52 }));
    await send(part('series-4', { created: 1 }));
    const late = await until(created.id, (j) => j.progress.processed === 4);
    await new Promise((r) => setTimeout(r, 300));
    const settled = (await job(created.id)).body.data[0];
    assert.deepEqual(settled, late);
    assert.deepEqual(
      [settled.status, settled.message, settled.finished_at, settled.result.created],
      ['partially_succeeded', finished.message, finished.finished_at, 53],
    );

    const other = await sys.tokenFor('demo', 'admin@demo.test', ['*']);
    assert.equal((await job(created.id, other)).status, 404);
  });

  it('refuses a bad kind or total, and a call without a principal', async () => {
    const ctx = { context: { requestId: 'test', tenant: 'demo', principal } };
    await assert.rejects(sys.clients.workflows.createJob({ kind: 'Forecast Run', total: 1 }, ctx), /job kind/);
    await assert.rejects(sys.clients.workflows.createJob({ kind: 'forecast_run', total: -1 }, ctx), /total/);
    await assert.rejects(
      sys.clients.workflows.createJob({ kind: 'forecast_run', total: 1 }, { context: { requestId: 'test', tenant: 'demo' } }),
      /x-principal/,
    );
  });

  it('a malformed event ends in the dead-letter queue; an event for another tenant changes nothing', async () => {
    const created = await sys.clients.workflows.createJob(
      { kind: 'supply_plan_run', total: 1 },
      { context: { requestId: 'test', tenant: 'demo', principal } },
    );
    await send({ type: 'finished', job_id: created.id, tenant: 'acme', status: 'succeeded' });
    await send({ type: 'part', job_id: created.id, tenant: 'demo' });
    const events = await sys.proc.deps.bus();
    for (let i = 0; i < 200; i++) {
      const dead = await events.deadLetters<{ job_id: number }>(QUEUE, 100);
      if (dead.some((m) => m.body.job_id === created.id)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok((await events.deadLetters<{ job_id: number }>(QUEUE, 100)).some((m) => m.body.job_id === created.id));
    assert.equal((await job(created.id)).body.data[0].status, 'queued');
  });
});
