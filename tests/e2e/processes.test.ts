import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createClients, loadConfig } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { skipUnless } from '../support/require';
import { buildOnce, REPO_ROOT, startNode, type NodeProc } from '../support/processes';

type Proc = NodeProc;

/** The compiled server, started as the image starts it. */
const start = (args: string[], env: Record<string, string>): Proc => startNode(args, env);

async function waitFor(url: string, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    try {
      const res = await fetch(url);
      if (res.ok) return Date.now() - t0;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** ps exits 1 when it finds no process. */
function spawnedSafe(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

describe('platform: processes', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const procs: Proc[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'supply-proc-'));
    dirs.push(d);
    return d;
  };
  before(() => buildOnce());
  afterEach(() => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('the compiled server (target all) answers /healthz within 15 s and exits 0 on SIGTERM', async () => {
    const base = await freePortRange(6);
    const p = start([], { PORT: String(base + 5), GRPC_BASE_PORT: String(base), DATA_DIR: tmp(), LOG_LEVEL: 'info' });
    procs.push(p);
    const took = await waitFor(`http://127.0.0.1:${base + 5}/healthz`, 15_000);
    assert.ok(took < 15_000);
    await waitFor(`http://127.0.0.1:${base + 5}/readyz`, 10_000);
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
    assert.ok(
      p.logs.some((l) => l.includes('"msg":"stopped"')),
      'logs a clean stop',
    );
  });

  it('npm start runs node on the compiled build and hands SIGTERM to it: the server drains and npm exits 0', async () => {
    const base = await freePortRange(6);
    const url = `http://127.0.0.1:${base + 5}`;
    const child = spawn('npm', ['start'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(base + 5),
        GRPC_BASE_PORT: String(base),
        DATA_DIR: tmp(),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logs: string[] = [];
    child.stdout!.on('data', (b) => logs.push(...String(b).split('\n')));
    child.stderr!.on('data', (b) => logs.push(...String(b).split('\n')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    procs.push({ child, logs, exited });
    await waitFor(`${url}/readyz`, 30_000);
    const server = logs.map((l) => /"pid":(\d+).*"msg":"started"/.exec(l)).find(Boolean);
    assert.ok(server && Number(server[1]) !== child.pid, 'the server logs its own pid');
    // What a container runtime or a terminal's kill does: SIGTERM to the launcher only.
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(
      logs.some((l) => l.includes('"msg":"stopped"')),
      'the server drained',
    );
    assert.equal(
      await fetch(`${url}/healthz`).then(
        () => 'answered',
        () => 'gone',
      ),
      'gone',
      'no orphan server left answering',
    );
    assert.throws(() => process.kill(Number(server![1]), 0), 'the server process is gone');
  });

  it('refuses to start on bad configuration, naming the variable', async () => {
    const p = start([], { PORT: 'eighty', DATA_DIR: tmp() });
    assert.equal(await p.exited, 2);
    assert.ok(
      p.logs.some((l) => l.includes('PORT')),
      p.logs.join('\n'),
    );
    const q = start(['--target=gateway'], { DATA_DIR: tmp() });
    assert.equal(await q.exited, 2);
    assert.ok(
      q.logs.some((l) => l.includes('SERVICE_CREDENTIAL')),
      q.logs.join('\n'),
    );
  });

  it('start:distributed told SIGTERM while its targets are still starting stops them all and exits 0', async function () {
    skipUnless(this, 'AMQP', process.env.AMQP_URL ? null : 'AMQP_URL is not set (start:distributed needs RabbitMQ)');
    const base = await freePortRange(6);
    const p = startNode(
      [],
      {
        AMQP_URL: process.env.AMQP_URL!,
        BUS_NAMESPACE: `early-${randomBytes(4).toString('hex')}`,
        PORT: String(base + 5),
        GRPC_BASE_PORT: String(base),
        METRICS_PORT: '0',
        DATA_DIR: tmp(),
        LOG_LEVEL: 'info',
      },
      REPO_ROOT,
      ['--enable-source-maps', 'dist/distributed.js'],
    );
    procs.push(p);
    // The launcher has spawned its first target, which is still starting, when the signal comes.
    const spawned = () => execFileSync('ps', ['-o', 'pid=', '--ppid', String(p.child.pid)], { encoding: 'utf8' }).trim() !== '';
    for (let i = 0; i < 200 && !spawnedSafe(spawned); i++) await new Promise((r) => setTimeout(r, 25));
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0, p.logs.slice(-20).join('\n'));
    assert.ok(!p.logs.some((l) => l.includes('"msg":"target exited"')), 'no target reported as failed');
  });

  it('runs services and the gateway as separate processes, and a request crosses them', async () => {
    const base = await freePortRange(6);
    const credential = randomBytes(32).toString('base64url');
    const dataDir = tmp();
    const common = { GRPC_BASE_PORT: String(base), SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir, LOG_LEVEL: 'debug' };
    const tokens = start(['--target=tokens'], { ...common, SEED_DEMO: '1' });
    const reference = start(['--target', 'reference'], { ...common, SEED_DEMO: '1' });
    const gateway = start(['--target=gateway'], { ...common, PORT: String(base + 5) });
    procs.push(tokens, reference, gateway);
    await waitFor(`http://127.0.0.1:${base + 5}/healthz`, 20_000);

    // An internal caller in another process creates a token with the shared credential.
    const config = loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir }, {});
    const clients = createClients(config);
    let token = '';
    for (let i = 0; i < 50 && !token; i++) {
      token = await clients.tokens
        .createToken(
          { user_email: 'planner@demo.test', name: 'cross', scopes: ['public_api.read'], expires_at: '' },
          { context: { requestId: 'x', tenant: 'demo' } },
        )
        .then(
          (t) => t.plain_text_token,
          () => '',
        );
      if (!token) await new Promise((r) => setTimeout(r, 200));
    }
    clients.close();
    assert.ok(token, 'token created over gRPC');

    let res: Response | undefined;
    for (let i = 0; i < 50; i++) {
      res = await fetch(`http://127.0.0.1:${base + 5}/demo/api/v1/uoms`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'X-Request-Id': 'cross-process-1' },
      });
      if (res.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(res!.status, 200);
    const body = (await res!.json()) as { data: Array<{ abbreviation: string }> };
    assert.deepEqual(body.data.map((u) => u.abbreviation).sort(), ['cs', 'ea', 'kg']);

    // The gateway's request id reached the reference process's log lines of that call.
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(
      reference.logs.some((l) => l.includes('"request_id":"cross-process-1"')),
      'request id logged by the service',
    );
    assert.ok(!gateway.logs.concat(reference.logs, tokens.logs).some((l) => l.includes(token.split('|')[1]!)), 'no token in logs');

    for (const p of [gateway, reference, tokens]) {
      p.child.kill('SIGTERM');
      assert.equal(await p.exited, 0);
    }
  });
});
