// Sync jobs under faults: a worker process killed mid-job, the broker closing every
// connection mid-job, the all-in-one process killed and restarted mid-job (RabbitMQ and
// the embedded bus), and a poison chunk. Each accepted row must end up loaded exactly
// once and the job finished. RabbitMQ cases need AMQP_URL; without it they are skipped.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClients, loadConfig, type Clients } from '@supply/kit';
import { CHUNKS_QUEUE, openJobs, openStaging } from '@supply/workflows';
import { freePortRange } from '../support/ports';
import { skipUnless } from '../support/require';
import { startSystem, type TestSystem } from '../support/system';
import { days, dropBusNamespace, postFile, readJob, salesCsv, salesRecords, salesRow, waitForJob } from '../e2e/workflows-support';

const AMQP_URL = process.env.AMQP_URL;
const MAIN = 'services/runner/src/main.ts';
const ITEMS = Array.from({ length: 40 }, (_, i) => `SKU-${String(i + 1).padStart(4, '0')}`);
const run = promisify(execFile);

interface Proc {
  child: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
}

function spawnRunner(target: string, env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, `--target=${target}`], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  child.stdout!.on('data', (b) => logs.push(...String(b).split('\n').filter(Boolean)));
  child.stderr!.on('data', (b) => logs.push(...String(b).split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, logs, exited };
}

async function eventually<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A CSV load of `count` rows (40 items x days from `start`), every row a new record. */
function load(start: string, count: number) {
  const rows = days(start, Math.ceil(count / ITEMS.length))
    .flatMap((date, d) => ITEMS.map((item, i) => salesRow(date, (d * ITEMS.length + i) % 97, { item_name: item })))
    .slice(0, count);
  return { rows, csv: salesCsv(rows), from: String(rows[0]!.sell_date), to: String(rows[rows.length - 1]!.sell_date) };
}

/** Every row of the load is stored exactly once, with its own quantity. */
async function assertLoadedOnce(clients: Clients, rows: ReturnType<typeof load>) {
  const stored = await salesRecords(clients, 'demo', {
    customer_group_names: ['Retail'],
    sale_type_names: ['History'],
    sell_date_from: rows.from,
    sell_date_to: rows.to,
  });
  const mine = stored.filter((r) => ITEMS.includes(r.item_name));
  assert.equal(mine.length, rows.rows.length, 'one record per accepted row');
  const want = new Map(rows.rows.map((r) => [`${r.item_name}|${r.sell_date}`, r.quantity]));
  for (const r of mine) assert.equal(r.quantity, want.get(`${r.item_name}|${r.sell_date}`), `${r.item_name} ${r.sell_date}`);
}

/** Waits for the job to finish, through the restarts a fault causes. */
async function finished(clients: Clients, token: string, jobId: number, logs: () => string[]): Promise<any> {
  try {
    return await eventually(
      `job ${jobId} finished`,
      async () => {
        const job = await readJob({ clients }, 'demo', token, jobId);
        return ['succeeded', 'failed', 'partially_succeeded'].includes(job.status) ? job : undefined;
      },
      90_000,
    );
  } catch (err) {
    throw new Error(`${String(err)}\n${logs().slice(-20).join('\n')}`, { cause: err });
  }
}

/** Waits until the job has applied some rows but not all: the moment to break something. */
async function midJob(clients: Clients, token: string, jobId: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const job = await readJob({ clients }, 'demo', token, jobId);
    if (['succeeded', 'failed', 'partially_succeeded'].includes(job.status))
      throw new Error(`job ${jobId} finished before the fault: ${JSON.stringify(job)}`);
    if (job.progress.processed > 0) return;
    if (Date.now() - t0 > 60_000) throw new Error(`job ${jobId} did not start: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('workflows faults', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  const procs: Proc[] = [];
  const namespaces: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'supply-wf-faults-'));
    dirs.push(d);
    return d;
  };
  const namespace = () => {
    const ns = `wf-faults-${randomBytes(4).toString('hex')}`;
    namespaces.push(ns);
    return ns;
  };
  afterEach(() => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  after(async () => {
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
    for (const ns of namespaces) await dropBusNamespace({ AMQP_URL: AMQP_URL!, BUS_NAMESPACE: ns }).catch(() => undefined);
  });

  /** A token for planner@demo.test with a rate limit these tests cannot reach. */
  async function plannerToken(clients: Clients): Promise<string> {
    const ctx = { context: { requestId: 'faults', tenant: 'demo' } };
    return eventually('a token', async () => {
      await clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, ctx);
      return (await clients.tokens.createToken({ user_email: 'planner@demo.test', name: 'faults', scopes: ['*'], expires_at: '' }, ctx))
        .plain_text_token;
    });
  }

  async function workerKilled() {
    const base = await freePortRange(6);
    const dataDir = tmp();
    const env = {
      GRPC_BASE_PORT: String(base),
      SERVICE_CREDENTIAL: randomBytes(32).toString('base64url'),
      DATA_DIR: dataDir,
      AMQP_URL: AMQP_URL!,
      BUS_NAMESPACE: namespace(),
    };
    const clients = createClients(
      loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: env.SERVICE_CREDENTIAL, DATA_DIR: dataDir }, {}),
    );
    try {
      procs.push(spawnRunner('tokens', { ...env, SEED_DEMO: '1' }), spawnRunner('reference', { ...env, SEED_DEMO: '1' }));
      await eventually('reference up', async () => ((await clients.health('reference')) ? true : undefined));
      procs.push(spawnRunner('transactional', { ...env, SEED_DEMO: '0' }));
      let worker = spawnRunner('workflows', env);
      procs.push(worker, spawnRunner('gateway', { ...env, PORT: String(base + 5) }));
      const gateway = { baseUrl: `http://127.0.0.1:${base + 5}` };
      await eventually('services up', async () =>
        (await clients.health('transactional')) && (await clients.health('workflows')) ? true : undefined,
      );
      await eventually('gateway up', async () => ((await fetch(`${gateway.baseUrl}/healthz`)).ok ? true : undefined));
      const token = await plannerToken(clients);

      const rows = load('2045-01-01', 30_000);
      const res = await postFile(gateway, '/demo/api/v1/workflows/sync-sales/import', {
        token,
        file: rows.csv,
        fields: { 'options[continue_on_error]': 'true' },
      });
      assert.equal(res.status, 202, res.text);
      const jobId = res.body.data[0].job_id;
      await midJob(clients, token, jobId);
      worker.child.kill('SIGKILL');
      await worker.exited;
      worker = spawnRunner('workflows', env);
      procs.push(worker);

      const job = await finished(clients, token, jobId, () => worker.logs);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.deepEqual(job.result, { created: 30_000, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(job.progress, { processed: 30_000, total: 30_000 });
      await assertLoadedOnce(clients, rows);
    } finally {
      clients.close();
    }
  }

  async function brokerClosed() {
    const sys = await startSystem({ env: { AMQP_URL: AMQP_URL!, BUS_NAMESPACE: namespace() } });
    try {
      const token = await plannerToken(sys.clients);
      const rows = load('2046-01-01', 20_000);
      const res = await postFile(sys, '/demo/api/v1/workflows/sync-sales/import', {
        token,
        file: rows.csv,
        fields: { 'options[continue_on_error]': 'false' },
      });
      assert.equal(res.status, 202, res.text);
      const jobId = res.body.data[0].job_id;
      await eventually('validation under way', async () =>
        (await readJob(sys, 'demo', token, jobId)).status === 'running' ? true : undefined,
      );
      await run('rabbitmqctl', ['close_all_connections', 'workflows fault test']);
      const during = await eventually('the job after the close', () => readJob(sys, 'demo', token, jobId));
      assert.ok(!['succeeded', 'failed', 'partially_succeeded'].includes(during.status), 'the connections closed while the job ran');
      const job = await waitForJob(sys, 'demo', token, jobId, 90_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.deepEqual(job.result, { created: 20_000, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      await assertLoadedOnce(sys.clients, rows);
    } finally {
      await sys.stop();
    }
  }

  async function restartMidJob(bus: 'embedded' | 'rabbitmq') {
    const base = await freePortRange(6);
    const dataDir = tmp();
    const env: Record<string, string> = {
      PORT: String(base + 5),
      GRPC_BASE_PORT: String(base),
      SERVICE_CREDENTIAL: randomBytes(32).toString('base64url'),
      DATA_DIR: dataDir,
      ...(bus === 'rabbitmq' ? { AMQP_URL: AMQP_URL!, BUS_NAMESPACE: namespace() } : {}),
    };
    const clients = createClients(
      loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: env.SERVICE_CREDENTIAL, DATA_DIR: dataDir }, {}),
    );
    const system = { baseUrl: `http://127.0.0.1:${base + 5}` };
    try {
      let all = spawnRunner('all', env);
      procs.push(all);
      await eventually('all-in-one up', async () => ((await fetch(`${system.baseUrl}/readyz`)).ok ? true : undefined), 60_000);
      const token = await plannerToken(clients);
      const rows = load('2047-01-01', 20_000);
      const res = await postFile(system, '/demo/api/v1/workflows/sync-sales/import', {
        token,
        file: rows.csv,
        fields: { 'options[continue_on_error]': 'true' },
      });
      assert.equal(res.status, 202, res.text);
      const jobId = res.body.data[0].job_id;
      await midJob(clients, token, jobId);
      all.child.kill('SIGKILL');
      await all.exited;
      all = spawnRunner('all', env);
      procs.push(all);
      const job = await finished(clients, token, jobId, () => all.logs);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.deepEqual(job.result, { created: 20_000, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(job.progress, { processed: 20_000, total: 20_000 });
      await assertLoadedOnce(clients, rows);
    } finally {
      clients.close();
    }
  }

  async function poisonChunk(bus: 'embedded' | 'rabbitmq') {
    const sys: TestSystem = await startSystem({ env: bus === 'rabbitmq' ? { AMQP_URL: AMQP_URL!, BUS_NAMESPACE: namespace() } : {} });
    try {
      const token = await plannerToken(sys.clients);
      // Workers paused while the load is staged, so its chunk can be spoiled before anyone reads it.
      const workflows = sys.proc.modules.get('workflows')!;
      await workflows.stop();
      const rows = load('2048-01-01', 2_500);
      const res = await postFile(sys, '/demo/api/v1/workflows/sync-sales/import', {
        token,
        file: rows.csv,
        fields: { 'options[continue_on_error]': 'true' },
      });
      assert.equal(res.status, 202, res.text);
      const jobId = res.body.data[0].job_id;
      const store = await sys.proc.deps.openStore('workflows');
      const { upload } = (await (await openJobs(store)).findById(jobId))!.sync!;
      const staging = await openStaging(store);
      const good = (await staging.chunks.findOne({ upload, seq: 1 }))!.rows_json;
      await staging.chunks.updateOne({ upload, seq: 1 }, { $set: { rows_json: 'not rows' } });
      await workflows.start!();

      const job = await waitForJob(sys, 'demo', token, jobId, 60_000);
      assert.equal(job.status, 'partially_succeeded', JSON.stringify(job));
      assert.deepEqual(job.result, { created: 1_500, updated: 0, deleted: 0, unchanged: 0, failed: 1_000 });
      assert.deepEqual(job.progress, { processed: 2_500, total: 2_500 });
      assert.match(
        job.message,
        /Chunk 1 \(rows 1000-1999\) was not loaded: it failed with an internal error\. It went to the dead-letter queue\./,
      );
      const chunkError = job.errors.find((e: { field: string }) => e.field === 'chunk.1');
      assert.deepEqual(
        chunkError && { row: chunkError.row, field: chunkError.field },
        { row: 1000, field: 'chunk.1' },
        JSON.stringify(job.errors),
      );
      assert.match(chunkError.message, /^Chunk 1 \(rows 1000-1999\) was not loaded: it failed with an internal error\./);
      const dead = await (await sys.proc.deps.bus()).deadLetters<{ job_id: number; seq: number; step: string }>(CHUNKS_QUEUE, 1000);
      assert.deepEqual(
        dead.filter((m) => m.body.job_id === jobId).map((m) => [m.body.seq, m.body.step]),
        [[1, 'load']],
      );
      const stored = await salesRecords(sys.clients, 'demo', {
        customer_group_names: ['Retail'],
        sell_date_from: rows.from,
        sell_date_to: rows.to,
      });
      assert.equal(stored.filter((r) => ITEMS.includes(r.item_name)).length, 1_500, 'chunks 0 and 2 loaded');

      // The cause is mended and an operator replays the dead letter: the chunk loads, and the job's counts follow.
      await staging.chunks.updateOne({ upload, seq: 1 }, { $set: { rows_json: good } });
      assert.equal(await (await sys.proc.deps.bus()).replayDeadLetters(CHUNKS_QUEUE, 1000), 1);
      const replayed = await eventually('the replayed chunk counted', async () => {
        const j = await readJob({ clients: sys.clients }, 'demo', token, jobId);
        return j.result.failed === 0 ? j : undefined;
      });
      assert.equal(replayed.status, 'succeeded', JSON.stringify(replayed));
      assert.deepEqual(replayed.result, { created: 2_500, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(replayed.progress, { processed: 2_500, total: 2_500 });
      assert.equal(replayed.errors_count, 0, JSON.stringify(replayed.errors));
      assert.match(replayed.message, /Chunk 1 was replayed from the dead-letter queue \(revision 1\)\.$/);
      await assertLoadedOnce(sys.clients, rows);
    } finally {
      await sys.stop();
    }
  }

  describe('embedded bus', () => {
    it('the all-in-one process killed and restarted mid-job: the job finishes, every row loaded once', () => restartMidJob('embedded'));
    it('a poison chunk ends in the dead-letter queue and the job reports it; mended and replayed, it loads and the counts follow', () =>
      poisonChunk('embedded'));
  });

  describe(`RabbitMQ${AMQP_URL ? '' : ' (skipped: AMQP_URL is not set)'}`, () => {
    before(function () {
      skipUnless(this, 'AMQP', AMQP_URL ? null : 'AMQP_URL is not set');
    });
    it('a worker process killed with SIGKILL mid-job: the restarted worker finishes it, every row loaded once', workerKilled);
    it('the broker closes every connection mid-job: the job finishes, every row loaded once', brokerClosed);
    it('the all-in-one process killed and restarted mid-job: the job finishes, every row loaded once', () => restartMidJob('rabbitmq'));
    it('a poison chunk ends in the dead-letter queue and the job reports it; mended and replayed, it loads and the counts follow', () =>
      poisonChunk('rabbitmq'));
  });
});
