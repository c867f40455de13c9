// Helpers shared by the metering and reference-cache end-to-end suites.
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { freePortRange } from '../support/ports';
import { api, type TestSystem } from '../support/system';
export { ScratchRedis } from '../support/scratch-redis';

/** With REDIS_URL the system meters in Redis (keys under a namespace of this run); without it, in memory. */
export const REDIS_URL = process.env.REDIS_URL;
export const meterEnv = (): Record<string, string> =>
  REDIS_URL ? { REDIS_URL, BUS_NAMESPACE: `metering-e2e-${randomBytes(4).toString('hex')}` } : {};

interface Limits {
  rate?: number;
  window?: number;
  credits?: number;
}

/** Deletes the meter keys a run left under its namespace (credit balances live for weeks). */
export async function clearMeterKeys(env: Record<string, string>): Promise<void> {
  if (!env.REDIS_URL || !env.BUS_NAMESPACE) return;
  const redis = createClient({ url: env.REDIS_URL });
  await redis.connect();
  try {
    const keys = await redis.keys(`${env.BUS_NAMESPACE}:*`);
    if (keys.length) await redis.del(keys);
  } finally {
    await redis.quit();
  }
}

/** A new workspace with an admin and the given limits, so each test owns its windows and balance. */
export async function freshTenant(sys: TestSystem, limits: Limits = {}) {
  const slug = `m-${randomBytes(4).toString('hex')}`;
  const email = `admin@${slug}.test`;
  await sys.clients.tokens.createTenant({ slug, name: '', public_api_enabled: true });
  await sys.clients.tokens.createUser(
    { email, password: 'metering-password-1', is_admin: true, levels: {} },
    { context: { requestId: 'test', tenant: slug } },
  );
  await sys.clients.tokens.updateTenant({
    slug,
    rate_limit: limits.rate,
    rate_window_seconds: limits.window,
    monthly_credits: limits.credits,
  });
  return { slug, token: (scopes = ['*']) => sys.tokenFor(slug, email, scopes) };
}

export function rateLimitOf(headers: Headers): { r: number; t: number } {
  const m = /^"default";r=(\d+);t=(\d+)$/.exec(headers.get('ratelimit') ?? '');
  assert.ok(m, `RateLimit field: ${headers.get('ratelimit')}`);
  return { r: Number(m[1]), t: Number(m[2]) };
}

/** Polls until `check` passes (usage travels the bus before it is counted). */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => void, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    try {
      check(value);
      return value;
    } catch (err) {
      if (Date.now() - started > timeoutMs) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Waits until the tokens service has folded usage that passes `check`, asking it directly
 * (not through `GET /usage`, which would itself be recorded and rate-limited).
 */
export async function usageFolded(
  sys: TestSystem,
  slug: string,
  check: (totals: { requests: number; credits: number }) => void,
): Promise<void> {
  const today = sys.config.now().toISOString().slice(0, 10);
  await eventually(
    () =>
      sys.clients.tokens.getUsage(
        { from: `${today.slice(0, 7)}-01`, to: today, group_by: [] },
        { context: { requestId: 'test', tenant: slug } },
      ),
    (report) => check({ requests: report.requests, credits: report.credits }),
  );
}

export async function creditsOf(sys: { baseUrl: string }, slug: string, token: string) {
  const res = await api(sys, `/${slug}/api/v1/credits`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.data[0] as { balance: number; allowance: number; used: number; period: string; period_start: string; period_end: string };
}

/**
 * One more gateway process (from the sources), reaching the system's services over gRPC and sharing
 * its Redis and bus: the suites that check what two gateways see of each other start it.
 */
export async function extraGateway(
  sys: TestSystem,
  env: Record<string, string>,
  dataDir: string,
): Promise<{ baseUrl: string; child: ChildProcess; logs: string[] }> {
  const port = await freePortRange(1);
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/runner/src/main.ts', '--target=gateway'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...env,
      PORT: String(port),
      GRPC_BASE_PORT: String(sys.config.GRPC_BASE_PORT),
      SERVICE_CREDENTIAL: sys.config.serviceCredential,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  child.stdout!.on('data', (b) => logs.push(String(b)));
  child.stderr!.on('data', (b) => logs.push(String(b)));
  const baseUrl = `http://127.0.0.1:${port}`;
  await eventually(
    () =>
      fetch(`${baseUrl}/healthz`).then(
        (r) => r.status,
        () => 0,
      ),
    (status) => assert.equal(status, 200, logs.join('')),
    30_000,
  );
  return { baseUrl, child, logs };
}
