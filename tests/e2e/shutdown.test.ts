// SIGTERM to the compiled server, started exactly as the image starts it: a slow request in
// flight is answered, keep-alive answers during the drain say `Connection: close`, the process
// exits 0 within SHUTDOWN_TIMEOUT_MS, and the job the request started completes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients, loadConfig, SERVICE_NAMES, type Clients } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { buildOnce, drainScenario, type DrainOutcome, salesCsvRows, startNode, waitFor, type NodeProc } from '../support/processes';
import { busEnv, dropBusNamespace, waitForJob } from './workflows-support';

const BUDGET_MS = 4_000;
const call = { context: { requestId: 'test', tenant: 'demo' } };

async function tokenAndLimits(clients: Clients): Promise<string> {
  // The tokens service may still be starting: retry the first call.
  for (let i = 0; ; i++) {
    try {
      await clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
      break;
    } catch (err) {
      if (i > 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const created = await clients.tokens.createToken({ user_email: 'planner@demo.test', name: 'drain', scopes: ['*'], expires_at: '' }, call);
  return created.plain_text_token;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function assertGatewayDrained(outcome: DrainOutcome): void {
  assert.equal(outcome.upload.headers.connection, 'close', 'the in-flight keep-alive answer closes its connection');
  // The busy keep-alive client is told to close at its next answer, then finds the port shut; no request of it is reset.
  assert.ok(outcome.busy.after.length <= 1, `served ${outcome.busy.after.length} more times on one keep-alive connection`);
  assert.ok(outcome.busy.after.every((a) => a.headers.connection === 'close'), 'answers during the drain say Connection: close');
  assert.equal(outcome.busy.ended, 'ECONNREFUSED');
}

describe('platform: graceful shutdown of the compiled server', function () {
  this.timeout(240_000);
  const dirs: string[] = [];
  const procs: NodeProc[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'supply-drain-'));
    dirs.push(d);
    return d;
  };
  before(() => buildOnce());
  afterEach(() => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('all-in-one: the slow upload is answered with Connection: close, readiness drops, exit 0 within the budget, the job completes after restart', async () => {
    const base = await freePortRange(6);
    const env = { PORT: String(base + 5), GRPC_BASE_PORT: String(base), DATA_DIR: tmp(), SHUTDOWN_TIMEOUT_MS: String(BUDGET_MS), LOG_LEVEL: 'info' };
    const url = `http://127.0.0.1:${base + 5}`;
    const first = startNode([], env);
    procs.push(first);
    await waitFor(`${url}/readyz`, 30_000);
    const clients = createClients(loadConfig({ target: 'all', DATA_DIR: env.DATA_DIR, GRPC_BASE_PORT: base }, {}));
    try {
      const token = await tokenAndLimits(clients).catch((err) => {
        throw new Error(`${err.message}\n${first.logs.slice(-8).join('\n')}`);
      });
      const outcome = await drainScenario({
        baseUrl: url,
        token,
        csv: salesCsvRows('2061-01-01', 3_000, 7),
        kill: () => first.child.kill('SIGTERM'),
        exited: first.exited,
        budgetMs: BUDGET_MS,
        gatewayDraining: true,
        probe: () => clients.health('workflows'),
      });
      assertGatewayDrained(outcome);
      assert.equal(outcome.probed, false, 'the services report NOT_SERVING at once');
      assert.ok(first.logs.some((l) => l.includes('"msg":"stopped"')), first.logs.slice(-5).join('\n'));

      const second = startNode([], env);
      procs.push(second);
      await waitFor(`${url}/readyz`, 30_000);
      const job = await waitForJob({ clients }, 'demo', token, outcome.jobId, 60_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.progress.processed, 3_000);
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    } finally {
      clients.close();
    }
  });

  it('each target as its own process: SIGTERM to any one of them loses neither the slow upload nor the job', async function () {
    if (!process.env.AMQP_URL) this.skip(); // separate processes share the bus through RabbitMQ
    const bus = busEnv();
    const base = await freePortRange(6);
    const credential = randomBytes(32).toString('base64url');
    const dataDir = tmp();
    const common = { ...bus, GRPC_BASE_PORT: String(base), SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_MS: String(BUDGET_MS), LOG_LEVEL: 'info' };
    const url = `http://127.0.0.1:${base + 5}`;
    const targets = [...SERVICE_NAMES, 'gateway'] as const;
    const envOf = (t: string) => ({ ...common, ...(t === 'gateway' ? { PORT: String(base + 5) } : { SEED_DEMO: '1' }) });
    const running = new Map<string, NodeProc>();
    const launch = (t: string) => {
      const p = startNode([`--target=${t}`], envOf(t));
      procs.push(p);
      running.set(t, p);
    };
    targets.forEach(launch);
    const clients = createClients(loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir }, {}));
    // The gateway is ready on its own; the services behind it each report their own health.
    const systemUp = async () => {
      await waitFor(`${url}/readyz`, 30_000);
      await until(async () => (await Promise.all(SERVICE_NAMES.map((s) => clients.health(s)))).every(Boolean), 60_000);
    };
    try {
      await systemUp();
      const token = await tokenAndLimits(clients);
      let year = 2070;
      for (const target of ['gateway', 'workflows', 'transactional', 'reference', 'tokens', 'compute']) {
        const victim = running.get(target)!;
        const outcome = await drainScenario({
          baseUrl: url,
          token,
          csv: salesCsvRows(`${year++}-01-01`, 1_500, 3),
          kill: () => victim.child.kill('SIGTERM'),
          exited: victim.exited,
          budgetMs: BUDGET_MS,
          gatewayDraining: target === 'gateway',
          // Only the gateway and workflows are on the upload's path; any other target is back before it ends.
          restartBeforeFinishing:
            target === 'gateway' || target === 'workflows'
              ? undefined
              : async () => {
                  launch(target);
                  await until(() => clients.health(target as (typeof SERVICE_NAMES)[number]), 30_000);
                },
        }).catch((err) => {
          throw new Error(`${target}: ${err.message}\n${victim.logs.slice(-8).join('\n')}`);
        });
        if (target === 'gateway') assertGatewayDrained(outcome);
        if (target === 'gateway' || target === 'workflows') launch(target);
        await systemUp();
        const job = await waitForJob({ clients }, 'demo', token, outcome.jobId, 60_000);
        assert.equal(job.status, 'succeeded', `${target}: ${JSON.stringify(job)}`);
        assert.equal(job.progress.processed, 1_500, target);
      }
      for (const p of running.values()) p.child.kill('SIGTERM');
      for (const [t, p] of running) assert.equal(await p.exited, 0, t);
    } finally {
      clients.close();
      await dropBusNamespace(bus);
    }
  });
});
