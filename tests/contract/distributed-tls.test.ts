import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, createClients, createLogger, loadConfig, runModules, type RunningProcess } from '@supply/kit';
import { grpc_health_v1 } from '@supply/contracts';
import { ALL_MODULES } from '@supply/runner';
import { freePortRange } from '../support/ports';
import { skipBecause } from '../support/require';

/**
 * Separate targets wired the way the Helm chart wires distributed mode: peers at dns:///
 * names, round_robin, mutual TLS from PEM files, and a plaintext health-only port per service.
 */
describe('separate targets over mutual TLS, as the chart configures them', function () {
  this.timeout(60_000);
  const procs: RunningProcess[] = [];
  let dir: string;
  let base: number;
  let env: Record<string, string>;

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'supply-tls-'));
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    try {
      openssl(
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=supply-ca',
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
      );
    } catch {
      skipBecause(this, 'no openssl on this machine to make the certificates');
    }
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:supply-planning.internal\nextendedKeyUsage=serverAuth,clientAuth\n');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=supply-planning.internal', '-keyout', 'tls.key', '-out', 'tls.csr');
    openssl(
      'x509',
      '-req',
      '-in',
      'tls.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      'ext.cnf',
      '-out',
      'tls.crt',
    );
    base = await freePortRange(9);
    env = {
      GRPC_BASE_PORT: String(base),
      PORT: String(base + 5),
      SERVICE_CREDENTIAL: 's'.repeat(40),
      LOG_LEVEL: 'silent',
      SEED_DEMO: '1',
      GRPC_LB_POLICY: 'round_robin',
      GRPC_MAX_CONNECTION_AGE_MS: '60000',
      GRPC_TLS_CERT: join(dir, 'tls.crt'),
      GRPC_TLS_KEY: join(dir, 'tls.key'),
      GRPC_TLS_CA: join(dir, 'ca.crt'),
      GRPC_TLS_SERVER_NAME: 'supply-planning.internal',
      TOKENS_ADDR: `dns:///localhost:${base}`,
      REFERENCE_ADDR: `dns:///localhost:${base + 1}`,
    };
    const start = async (target: string, extra: Record<string, string> = {}) => {
      const config = loadConfig({ target }, { ...env, DATA_DIR: join(dir, target), ...extra });
      procs.push(
        await runModules(
          config,
          createLogger('silent'),
          ALL_MODULES.filter((m) => m.name === target),
        ),
      );
    };
    await start('tokens', { GRPC_HEALTH_PORT: String(base + 6) });
    await start('reference', { GRPC_HEALTH_PORT: String(base + 7) });
    await start('gateway');
  });
  after(async () => {
    for (const p of procs.reverse()) await p.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves an API read through the gateway, every hop over TLS', async () => {
    const clients = createClients(loadConfig({ target: 'gateway' }, env));
    try {
      const { plain_text_token: token } = await clients.tokens.createToken(
        { user_email: 'planner@demo.test', name: 'tls', scopes: ['*'], expires_at: '' },
        { context: { requestId: 'tls', tenant: 'demo' } },
      );
      const res = await fetch(`http://127.0.0.1:${base + 5}/demo/api/v1/uoms?per_page=1`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(((await res.json()) as { data: unknown[] }).data.length, 1);
    } finally {
      clients.close();
    }
  });

  it('refuses a plaintext caller on the service port, and answers probes on the health port in plaintext', async () => {
    const plain = createClients(loadConfig({ target: 'gateway' }, { ...env, GRPC_TLS_CERT: '', GRPC_TLS_KEY: '', GRPC_TLS_CA: '' }));
    const health = createClient(grpc_health_v1.HealthService, `127.0.0.1:${base + 6}`, { credential: '', deadlineMs: 5_000 });
    try {
      assert.equal(await plain.health('tokens'), false);
      const { SERVING } = grpc_health_v1.HealthCheckResponse_ServingStatus;
      assert.equal((await health.check({ service: 'liveness' })).status, SERVING);
      assert.equal((await health.check({ service: '' })).status, SERVING);
    } finally {
      plain.close();
      health.close();
    }
  });
});
