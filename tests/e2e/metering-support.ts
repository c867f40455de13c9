// Helpers shared by the metering end-to-end suites.
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createClient } from 'redis';
import { api, type TestSystem } from '../support/system';

/** With REDIS_URL the system meters in Redis (keys under a namespace of this run); without it, in memory. */
export const REDIS_URL = process.env.REDIS_URL;
export const meterEnv = (): Record<string, string> => (REDIS_URL ? { REDIS_URL, BUS_NAMESPACE: `metering-e2e-${randomBytes(4).toString('hex')}` } : {});

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

/** A redis-server of the test's own on a free port, so stopping it never touches the machine's Redis. */
export class ScratchRedis {
  #process: ChildProcess | undefined;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.#process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 5_000;
    while (!(await this.#answers())) {
      if (Date.now() > deadline) throw new Error(`redis-server on ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  #answers(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
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
  await sys.clients.tokens.updateTenant({ slug, rate_limit: limits.rate, rate_window_seconds: limits.window, monthly_credits: limits.credits });
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
export async function usageFolded(sys: TestSystem, slug: string, check: (totals: { requests: number; credits: number }) => void): Promise<void> {
  const today = sys.config.now().toISOString().slice(0, 10);
  await eventually(
    () => sys.clients.tokens.getUsage({ from: `${today.slice(0, 7)}-01`, to: today, group_by: [] }, { context: { requestId: 'test', tenant: slug } }),
    (report) => check({ requests: report.requests, credits: report.credits }),
  );
}

export async function creditsOf(sys: { baseUrl: string }, slug: string, token: string) {
  const res = await api(sys, `/${slug}/api/v1/credits`, { token });
  assert.equal(res.status, 200, res.text);
  return res.body.data[0] as { balance: number; allowance: number; used: number; period: string; period_start: string; period_end: string };
}
