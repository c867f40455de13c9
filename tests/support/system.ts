import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients, createLogger, loadConfig, runModules, type Clients, type Config, type RunningProcess } from '@supply/kit';
import { ALL_MODULES } from '@supply/runner';
import { freePortRange } from './ports';

export interface TestSystem {
  baseUrl: string;
  config: Config;
  proc: RunningProcess;
  /** Clients as an internal caller with the service credential would use them. */
  clients: Clients;
  dataDir: string;
  /** A fresh API token for a seeded user, created through the tokens service. */
  tokenFor(tenant: string, email: string, scopes?: string[]): Promise<string>;
  /** Stops the process; keeps DATA_DIR unless `wipe`. */
  stop(opts?: { wipe?: boolean }): Promise<void>;
}

/**
 * Boots the all-in-one target in this process on free ports with its own DATA_DIR (and the
 * real backends when MONGODB_URL / AMQP_URL / REDIS_URL are passed in `env`).
 */
export async function startSystem(opts: { env?: Record<string, string>; dataDir?: string } = {}): Promise<TestSystem> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'supply-e2e-'));
  const base = await freePortRange(6);
  const config = loadConfig(
    { target: 'all', PORT: base + 5, GRPC_BASE_PORT: base, DATA_DIR: dataDir, SEED_DEMO: '1', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' },
    { ...opts.env },
  );
  const logger = createLogger(config.LOG_LEVEL);
  const proc = await runModules(config, logger, ALL_MODULES);
  const clients = createClients(config);
  return {
    baseUrl: `http://127.0.0.1:${config.PORT}`,
    config,
    proc,
    clients,
    dataDir,
    async tokenFor(tenant, email, scopes = ['*']) {
      const created = await clients.tokens.createToken(
        { user_email: email, name: `test ${scopes.join(' ')}`, scopes, expires_at: '' },
        { context: { requestId: 'test', tenant } },
      );
      return created.plain_text_token;
    },
    async stop({ wipe = !opts.dataDir } = {}) {
      clients.close();
      await proc.stop();
      if (wipe) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** fetch with the JSON headers a well-behaved API client sends. */
export async function api(
  sys: { baseUrl: string },
  path: string,
  init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { Accept: 'application/json', ...init.headers };
  if (init.token) headers.Authorization = `Bearer ${init.token}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  }
  const res = await fetch(`${sys.baseUrl}${path}`, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
