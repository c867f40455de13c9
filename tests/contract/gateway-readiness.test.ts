import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, createLogger, loadConfig, runModules, type RunningProcess } from '@supply/kit';
import { formatToken, grpc_health_v1, newSecret } from '@supply/contracts';
import { ALL_MODULES } from '@supply/runner';
import { freePortRange } from '../support/ports';

/** The gateway and services as separate targets: each is ready on its own, as Kubernetes probes them. */
describe('readiness of separate targets', function () {
  this.timeout(30_000);
  const procs: RunningProcess[] = [];
  let dataDir: string;
  let base: number;
  const credential = 'c'.repeat(32);
  const start = async (target: string, extra: Record<string, string | number> = {}) => {
    const config = loadConfig(
      {
        target,
        GRPC_BASE_PORT: base,
        PORT: base + 5,
        DATA_DIR: join(dataDir, target),
        SERVICE_CREDENTIAL: credential,
        LOG_LEVEL: 'silent',
        ...extra,
      },
      {},
    );
    const proc = await runModules(
      config,
      createLogger(config.LOG_LEVEL),
      ALL_MODULES.filter((m) => m.name === target),
    );
    procs.push(proc);
    return proc;
  };
  const readyz = async () => {
    const res = await fetch(`http://127.0.0.1:${base + 5}/readyz`);
    return { status: res.status, body: (await res.json()) as { checks: Record<string, boolean>; services?: Record<string, boolean> } };
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'supply-readiness-'));
    base = await freePortRange(7);
  });
  after(async () => {
    for (const p of procs.reverse()) await p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the gateway is ready with no service up, reports them, and answers 503 on a route meanwhile', async () => {
    await start('gateway');
    const { status, body } = await readyz();
    assert.equal(status, 200);
    assert.deepEqual(body.checks, { bus: true, meter: true });
    assert.deepEqual(body.services, { tokens: false, reference: false, transactional: false, compute: false, workflows: false });
    // A well-formed token: checking it needs the tokens service.
    const token = formatToken(7, newSecret());
    const res = await fetch(`http://127.0.0.1:${base + 5}/demo/api/v1/uoms`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(res.status, 503);
    assert.doesNotMatch(await res.text(), /127\.0\.0\.1|ECONNREFUSED|round_robin/);
    const page = await fetch(`http://127.0.0.1:${base + 5}/demo/login`);
    assert.equal(page.status, 503);
    assert.doesNotMatch(await page.text(), /127\.0\.0\.1|ECONNREFUSED|round_robin/);
  });

  it('a service started later shows on /readyz, and its plaintext health port answers liveness and readiness', async () => {
    await start('tokens', { GRPC_HEALTH_PORT: base + 6 });
    // The gateway's channel retries on its reconnect backoff (about a second at first).
    for (const t0 = Date.now(); !(await readyz()).body.services?.tokens;) {
      assert.ok(Date.now() - t0 < 10_000, 'tokens never showed ready');
      await new Promise((r) => setTimeout(r, 200));
    }
    const health = createClient(grpc_health_v1.HealthService, `127.0.0.1:${base + 6}`, { credential, deadlineMs: 5_000 });
    try {
      const { SERVING } = grpc_health_v1.HealthCheckResponse_ServingStatus;
      assert.equal((await health.check({ service: 'liveness' })).status, SERVING);
      assert.equal((await health.check({ service: 'supply.tokens.v1.TokenService' })).status, SERVING);
    } finally {
      health.close();
    }
  });
});
