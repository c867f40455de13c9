import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import {
  createClients,
  createLogger,
  loadConfig,
  openBus,
  runModules,
  type Bus,
  type Clients,
  type Config,
  type RunningProcess,
} from '@supply/kit';
import { ALL_MODULES } from '@supply/runner';
import { freePortRange } from './ports';
import { buildOnce, startNode, waitFor, type NodeProc } from './processes';
import { dropBusNamespace } from '../e2e/workflows-support';

/** E2E_SYSTEM=distributed: the suite speaks to `npm run start:distributed`, every target its own process. */
export const DISTRIBUTED = process.env.E2E_SYSTEM === 'distributed';

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
  /** Distributed only: every line the launcher and its targets wrote (stdout and stderr). */
  logs?: string[];
}

/** A fresh API token for a seeded user, made through the tokens service as an internal caller. */
function tokenMaker(clients: Clients): TestSystem['tokenFor'] {
  return async (tenant, email, scopes = ['*']) => {
    const created = await clients.tokens.createToken(
      { user_email: email, name: `test ${scopes.join(' ')}`, scopes, expires_at: '' },
      { context: { requestId: 'test', tenant } },
    );
    return created.plain_text_token;
  };
}

/**
 * Boots the all-in-one target in this process on free ports with its own DATA_DIR (and the
 * real backends when MONGODB_URL / AMQP_URL / REDIS_URL are passed in `env`).
 */
export async function startSystem(opts: { env?: Record<string, string>; dataDir?: string } = {}): Promise<TestSystem> {
  if (DISTRIBUTED) return startDistributed(opts);
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'supply-e2e-'));
  const base = await freePortRange(6);
  const config = loadConfig(
    {
      target: 'all',
      PORT: base + 5,
      GRPC_BASE_PORT: base,
      DATA_DIR: dataDir,
      SEED_DEMO: opts.env?.SEED_DEMO ?? '1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    },
    // No metrics port unless a test asks: parallel test processes would contend for the default.
    { METRICS_PORT: '0', ...opts.env },
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
    tokenFor: tokenMaker(clients),
    async stop({ wipe = !opts.dataDir } = {}) {
      clients.close();
      await proc.stop();
      if (wipe) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * E2E_SYSTEM=distributed: `npm run start:distributed` (compiled, every target its own process)
 * on the real backends of the environment (AMQP_URL required; REDIS_URL and MONGODB_URL when
 * set), in a bus namespace and MongoDB database prefix of its own (the databases are dropped on
 * stop). `proc` offers only `deps.bus()` and `deps.config`.
 */
export async function startDistributed(opts: {
  env?: Record<string, string>;
  dataDir?: string;
  /** Keep every service on its embedded store even when MONGODB_URL is set (the demo seed takes FerretDB minutes). */
  embeddedStores?: boolean;
}): Promise<TestSystem> {
  buildOnce();
  const amqpUrl = opts.env?.AMQP_URL ?? process.env.AMQP_URL;
  if (!amqpUrl) throw new Error('E2E_SYSTEM=distributed needs AMQP_URL: the processes share one bus');
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'supply-e2e-'));
  const base = await freePortRange(6);
  const backends: Record<string, string> = {};
  const redisUrl = opts.env?.REDIS_URL ?? process.env.REDIS_URL;
  if (redisUrl) backends.REDIS_URL = redisUrl;
  const mongodbUrl = opts.embeddedStores ? undefined : (opts.env?.MONGODB_URL ?? process.env.MONGODB_URL);
  if (mongodbUrl) backends.MONGODB_URL = mongodbUrl;
  const ownNamespace = !opts.env?.BUS_NAMESPACE;
  const ownDatabases = Boolean(mongodbUrl) && !opts.env?.MONGODB_DATABASE_PREFIX;
  const runId = randomBytes(4).toString('hex');
  const env: Record<string, string> = {
    BUS_NAMESPACE: `e2e-${runId}`,
    MONGODB_DATABASE_PREFIX: `e2e_${runId}`,
    // No metrics ports unless a test asks (METRICS_PORT: the base of six): parallel runs would contend for the defaults.
    METRICS_PORT: '0',
    ...opts.env,
    ...backends,
    AMQP_URL: amqpUrl,
    PORT: String(base + 5),
    GRPC_BASE_PORT: String(base),
    DATA_DIR: dataDir,
    SEED_DEMO: opts.env?.SEED_DEMO ?? '1',
    LOG_LEVEL: opts.env?.LOG_LEVEL ?? process.env.TEST_LOG_LEVEL ?? 'silent',
    // CLOCK_NOW (when a test sets it) reads the same in every process and in `config.now()` here.
    CLOCK_ORIGIN_MS: String(Date.now()),
  };
  // The launcher keeps the all-in-one secrets under DATA_DIR and hands them to every target.
  const { node: launcher, baseUrl, config, clients } = await launchCompiled('dist/distributed.js', env);
  let bus: Promise<Bus> | undefined;
  const proc = {
    ports: {},
    modules: new Map(),
    deps: {
      config,
      bus: () => (bus ??= openBus({ amqpUrl, namespace: config.BUS_NAMESPACE })),
    },
    stop: async () => undefined,
  } as unknown as RunningProcess;
  return {
    baseUrl,
    config,
    proc,
    clients,
    dataDir,
    logs: launcher.logs,
    tokenFor: tokenMaker(clients),
    async stop({ wipe = !opts.dataDir } = {}) {
      clients.close();
      if (bus) await (await bus).close().catch(() => undefined);
      await terminateCompiled(launcher, 'dist/distributed.js', async () => {
        if (ownNamespace) await dropBusNamespace(env);
        if (ownDatabases) await dropMongoDatabases(mongodbUrl!, env.MONGODB_DATABASE_PREFIX!);
      });
      if (wipe) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The compiled all-in-one target as production runs it (`node --enable-source-maps dist/main.js`,
 * built first) in a child process of its own, on free ports with its own DATA_DIR and the
 * embedded defaults unless `env` names backends. `pid` is the child's, so a bench can read its
 * CPU time; `proc` offers only `deps.config`.
 */
export async function startCompiledSystem(opts: { env?: Record<string, string> } = {}): Promise<TestSystem & { pid: number }> {
  buildOnce();
  const dataDir = mkdtempSync(join(tmpdir(), 'supply-compiled-'));
  const base = await freePortRange(6);
  const env: Record<string, string> = {
    // As the image sets it (deploy/Dockerfile).
    NODE_ENV: 'production',
    METRICS_PORT: '0',
    ...opts.env,
    PORT: String(base + 5),
    GRPC_BASE_PORT: String(base),
    DATA_DIR: dataDir,
    SEED_DEMO: opts.env?.SEED_DEMO ?? '1',
    LOG_LEVEL: opts.env?.LOG_LEVEL ?? process.env.TEST_LOG_LEVEL ?? 'silent',
  };
  const { node: server, baseUrl, config, clients } = await launchCompiled('dist/main.js', env);
  return {
    pid: server.child.pid!,
    baseUrl,
    config,
    proc: { ports: {}, modules: new Map(), deps: { config }, stop: async () => undefined } as unknown as RunningProcess,
    clients,
    dataDir,
    logs: server.logs,
    tokenFor: tokenMaker(clients),
    async stop({ wipe = true } = {}) {
      clients.close();
      await terminateCompiled(server, 'dist/main.js');
      if (wipe) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs a compiled entry point (`node --enable-source-maps <entry>`) with exactly `env` (PORT,
 * GRPC_BASE_PORT and DATA_DIR included) and waits for its gateway to be ready; the config and
 * clients are an internal caller's, with the secrets the server keeps under DATA_DIR.
 */
async function launchCompiled(entry: string, env: Record<string, string>) {
  const node = startNode([], env, undefined, ['--enable-source-maps', entry]);
  const baseUrl = `http://127.0.0.1:${env.PORT}`;
  await Promise.race([
    waitFor(`${baseUrl}/readyz`, 60_000),
    node.exited.then((code) => {
      throw new Error(`${entry} exited ${code}: ${node.logs.slice(-10).join('\n')}`);
    }),
  ]);
  const config = loadConfig({ target: 'all', PORT: env.PORT, GRPC_BASE_PORT: Number(env.GRPC_BASE_PORT), DATA_DIR: env.DATA_DIR }, env);
  return { node, baseUrl, config, clients: createClients(config) };
}

/** SIGTERM to a launched entry point; `cleanup` runs once it has exited, then anything but exit 0 fails. */
async function terminateCompiled(node: NodeProc, entry: string, cleanup?: () => Promise<void>): Promise<void> {
  if (node.child.exitCode === null) node.child.kill('SIGTERM');
  const code = await node.exited;
  await cleanup?.();
  if (code !== 0) throw new Error(`${entry} exited ${code} on SIGTERM: ${node.logs.slice(-10).join('\n')}`);
}

/** Drops every MongoDB database a run made under its MONGODB_DATABASE_PREFIX (`<prefix>_<service>`). */
export async function dropMongoDatabases(url: string, prefix: string): Promise<void> {
  const client = new MongoClient(url);
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (name.startsWith(`${prefix}_`)) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
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
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
