// SIGTERM to the compiled server, started exactly as the image starts it: a slow request in
// flight is answered, keep-alive answers during the drain say `Connection: close`, the process
// exits 0 within SHUTDOWN_TIMEOUT_MS, /readyz answers 503 meanwhile, and the job the request started completes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { MongoClient } from 'mongodb';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients, loadConfig, SERVICE_NAMES, type Clients } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { buildOnce, drainScenario, type DrainOutcome, salesCsvRows, startNode, waitFor, type NodeProc } from '../support/processes';
import { skipUnless } from '../support/require';
import { dropMongoDatabases } from '../support/system';
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

interface Readiness {
  status: number;
  connection?: string;
  body: { status?: string; checks?: Record<string, boolean> };
}

/**
 * GET /readyz on one keep-alive connection opened (and answered 200) before the signal: the
 * draining gateway no longer accepts connections, so a probe right after SIGTERM reaches it
 * only on a connection it already had, as a load balancer's pooled one does.
 */
async function readinessProbe(url: string): Promise<{ get(): Promise<Readiness>; close(): void }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise<Readiness>((resolve, reject) => {
      const req = request(`${url}/readyz`, { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            connection: res.headers.connection,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  const before = await get();
  assert.equal(before.status, 200, `ready before the signal: ${JSON.stringify(before.body)}`);
  return { get, close: () => agent.destroy() };
}

/** Right after SIGTERM, while the slow upload is still being drained: 503, not accepting, and the connection let go. */
function assertNotReadyWhileDraining(readyz: Readiness): void {
  assert.equal(readyz.status, 503, `/readyz during the drain: ${JSON.stringify(readyz.body)}`);
  assert.equal(readyz.body.status, 'not_ready');
  assert.deepEqual(readyz.body.checks, { accepting: false });
  assert.equal(readyz.connection, 'close');
}

/**
 * MONGODB_URL unless it names FerretDB (CI's), which this test cannot use: the demo seed's ~30,000
 * sales upserts take it minutes. There the test stays on the embedded store (mongodb-system.test.ts
 * runs a file import on FerretDB without the seed).
 */
async function mongoForFileImports(): Promise<string | undefined> {
  const url = process.env.MONGODB_URL;
  if (!url) return undefined;
  const client = new MongoClient(url);
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return typeof info['ferretdbVersion'] === 'string' ? undefined : url;
  } finally {
    await client.close();
  }
}

function assertGatewayDrained(outcome: DrainOutcome): void {
  assert.equal(outcome.upload.headers.connection, 'close', 'the in-flight keep-alive answer closes its connection');
  // The busy keep-alive client is told to close at its next answer once the drain has begun, then finds the port shut;
  // no request of it is reset. Until the process acts on the signal (between two requests: a few ms, more on a busy
  // machine) it is still served as usual.
  const { after } = outcome.busy;
  const told = after.findIndex((a) => a.headers.connection === 'close');
  const beforeDrain = told === -1 ? after : after.slice(0, told);
  assert.ok(told === -1 || told === after.length - 1, `served ${after.length - told - 1} more times after Connection: close`);
  const late = beforeDrain.filter((a) => a.at - outcome.signalledAt > 2_000);
  assert.deepEqual(
    late.map((a) => a.at - outcome.signalledAt),
    [],
    'the gateway began draining within 2 s of SIGTERM',
  );
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
    const env = {
      PORT: String(base + 5),
      GRPC_BASE_PORT: String(base),
      DATA_DIR: tmp(),
      SHUTDOWN_TIMEOUT_MS: String(BUDGET_MS),
      LOG_LEVEL: 'info',
    };
    const url = `http://127.0.0.1:${base + 5}`;
    const first = startNode([], env);
    procs.push(first);
    await waitFor(`${url}/readyz`, 30_000);
    const clients = createClients(loadConfig({ target: 'all', DATA_DIR: env.DATA_DIR, GRPC_BASE_PORT: base }, {}));
    try {
      const token = await tokenAndLimits(clients).catch((err) => {
        throw new Error(`${err.message}\n${first.logs.slice(-8).join('\n')}`);
      });
      const readiness = await readinessProbe(url);
      const outcome = await drainScenario({
        baseUrl: url,
        token,
        csv: salesCsvRows('2061-01-01', 3_000, 7),
        kill: () => first.child.kill('SIGTERM'),
        exited: first.exited,
        budgetMs: BUDGET_MS,
        gatewayDraining: true,
        probe: async () => {
          const [workflows, readyz] = await Promise.all([clients.health('workflows'), readiness.get()]);
          return { workflows, readyz };
        },
      }).finally(() => readiness.close());
      assertGatewayDrained(outcome);
      const probed = outcome.probed as { workflows: boolean; readyz: Readiness };
      assert.equal(probed.workflows, false, 'the services report NOT_SERVING at once');
      assertNotReadyWhileDraining(probed.readyz);
      assert.ok(
        first.logs.some((l) => l.includes('"msg":"stopped"')),
        first.logs.slice(-5).join('\n'),
      );

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
    // Separate processes share the bus through RabbitMQ.
    skipUnless(this, 'AMQP', process.env.AMQP_URL ? null : 'AMQP_URL is not set');
    const bus = busEnv();
    // On the environment's MongoDB when MONGODB_URL is set, in databases of this run's own.
    const mongodbUrl = await mongoForFileImports();
    const mongo: Record<string, string> = mongodbUrl
      ? { MONGODB_URL: mongodbUrl, MONGODB_DATABASE_PREFIX: `drain_${randomBytes(4).toString('hex')}` }
      : {};
    const base = await freePortRange(6);
    const credential = randomBytes(32).toString('base64url');
    const dataDir = tmp();
    const common = {
      ...bus,
      ...mongo,
      GRPC_BASE_PORT: String(base),
      SERVICE_CREDENTIAL: credential,
      DATA_DIR: dataDir,
      SHUTDOWN_TIMEOUT_MS: String(BUDGET_MS),
      LOG_LEVEL: 'info',
    };
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
    const clients = createClients(
      loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir }, {}),
    );
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
        const readiness = target === 'gateway' ? await readinessProbe(url) : undefined;
        const outcome = await drainScenario({
          baseUrl: url,
          token,
          csv: salesCsvRows(`${year++}-01-01`, 1_500, 3),
          kill: () => victim.child.kill('SIGTERM'),
          exited: victim.exited,
          budgetMs: BUDGET_MS,
          gatewayDraining: target === 'gateway',
          probe: readiness?.get,
          // Only the gateway and workflows are on the upload's path; any other target is back before it ends.
          restartBeforeFinishing:
            target === 'gateway' || target === 'workflows'
              ? undefined
              : async () => {
                  launch(target);
                  await until(() => clients.health(target as (typeof SERVICE_NAMES)[number]), 30_000);
                },
        })
          .catch((err) => {
            // Every process's last warnings: the failing call may be any target's (gRPC ports count up from `base`).
            const warnings = [...running].map(
              ([n, p]) =>
                `== ${n}\n${p.logs
                  .filter((l) => !l.includes('"level":30'))
                  .slice(-8)
                  .join('\n')}`,
            );
            throw new Error(`${target} (gRPC base port ${base}): ${err.message}\n${warnings.join('\n')}`);
          })
          .finally(() => readiness?.close());
        if (target === 'gateway') {
          assertGatewayDrained(outcome);
          assertNotReadyWhileDraining(outcome.probed as Readiness);
        }
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
      if (mongo.MONGODB_URL) await dropMongoDatabases(mongo.MONGODB_URL, mongo.MONGODB_DATABASE_PREFIX!);
    }
  });
});
