// `npm run start:distributed`: every target (five services and the gateway) as its own
// process on one machine, sharing the environment's backends, as a cluster runs them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  createClients,
  createLogger,
  loadConfig,
  SERVICE_NAMES,
  startOrder,
  type Config,
  type ServiceName,
} from '@supply/kit';
import { ALL_MODULES } from './modules';

/** The server entry next to this file: dist/main.js when compiled, main.ts under tsx in development. */
function mainEntry(): string {
  const compiled = fileURLToPath(new URL('./main.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('./main.ts', import.meta.url));
}

function childEnv(config: Config): NodeJS.ProcessEnv {
  return {
    ...process.env,
    // All-in-one keeps its generated secrets under DATA_DIR; every process here must share them.
    SERVICE_CREDENTIAL: config.serviceCredential,
    CURSOR_SECRET: config.cursorSecret,
    SEED_DEMO: config.seedDemo ? '1' : '0',
    CLOCK_ORIGIN_MS: String(config.CLOCK_ORIGIN_MS),
  };
}

/** Each target's metrics port is the base (METRICS_PORT, default 9464) plus its index here, as its gRPC port is GRPC_BASE_PORT plus its index. */
const METRICS_ORDER = [...SERVICE_NAMES, 'gateway'] as const;

/** The metrics port of every target (0 for all when METRICS_PORT is 0); refuses a range that runs past 65535 or meets PORT or a gRPC port. */
function metricsPorts(config: Config): Record<string, number> {
  const base = config.metricsPort;
  const ports = Object.fromEntries(METRICS_ORDER.map((target, i) => [target, base === 0 ? 0 : base + i]));
  if (base === 0) return ports;
  const last = base + METRICS_ORDER.length - 1;
  const taken = [config.PORT, ...SERVICE_NAMES.map((s) => config.grpcPortOf(s))].filter((p) => p >= base && p <= last);
  if (last > 65535 || taken.length > 0) {
    throw new ConfigError(
      `Invalid configuration: METRICS_PORT ${base} gives the targets metrics ports ${base}-${last}, ${last > 65535 ? 'past 65535' : `which meet PORT or a gRPC port (${taken.join(', ')})`}`,
    );
  }
  return ports;
}

function main(): void {
  let config: Config;
  let metrics: Record<string, number>;
  try {
    // With CLOCK_NOW every target's clock starts from the launcher's instant, not from its own start.
    config = loadConfig({ target: 'all', CLOCK_ORIGIN_MS: process.env.CLOCK_ORIGIN_MS || Date.now() });
    if (!config.AMQP_URL) {
      throw new ConfigError('Invalid configuration: AMQP_URL is required to run the targets as separate processes (they share one bus)');
    }
    metrics = metricsPorts(config);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.LOG_LEVEL).child({ component: 'distributed' });
  const entry = mainEntry();
  const env = childEnv(config);
  const children = new Map<string, ChildProcess>();
  let stopping = false;
  let failed = false;

  const stopAll = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const child of children.values()) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };

  const spawnTarget = (target: string) => {
    // execArgv carries the tsx loader in development and nothing once compiled.
    // A METRICS_PORT the operator set is the target's own (taken, it fails); else the target's port is a default (taken, it warns).
    const port = metrics[target]!;
    const args = config.METRICS_PORT === undefined ? [`--default-metrics-port=${port}`] : [];
    const targetEnv = config.METRICS_PORT === undefined ? env : { ...env, METRICS_PORT: String(port) };
    const child = spawn(process.execPath, [...process.execArgv, entry, `--target=${target}`, ...args], {
      env: targetEnv,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.set(target, child);
    child.on('exit', (code, signal) => {
      children.delete(target);
      // A target still starting when told to stop has no drain to run yet and ends by the signal itself: as asked, not a failure.
      const asked = stopping && code === null && signal === 'SIGTERM';
      if (code !== 0 && !asked) {
        failed = true;
        logger.error({ target, code, signal }, 'target exited');
      }
      // One target gone means the system is broken: take the others down rather than serve half of it.
      if (!stopping) {
        failed = true;
        stopAll('SIGTERM');
      }
      if (children.size === 0) {
        logger.info({ failed }, 'stopped');
        process.exit(failed ? 1 : 0);
      }
    });
  };

  // Each target starts once the services it calls answer SERVING, as all-in-one starts them in
  // dependency order (the demo seed of one service reads another's data).
  const clients = createClients(config);
  const serving = async (service: ServiceName) => {
    while (!stopping && !(await clients.health(service).catch(() => false))) await new Promise((r) => setTimeout(r, 100));
  };
  const started = new Map<string, Promise<void>>();
  for (const m of startOrder(ALL_MODULES)) {
    started.set(
      m.name,
      (async () => {
        await Promise.all(m.dependencies.map((d) => started.get(d)));
        if (stopping) return;
        spawnTarget(m.name);
        if (m.name !== 'gateway') await serving(m.name as ServiceName);
      })(),
    );
  }
  void Promise.all(started.values()).then(() => {
    clients.close();
    if (!stopping) {
      // Where to scrape each target (a target whose default port was taken warned and serves none).
      const scrape = Object.fromEntries(
        [...children.keys()].map((t) => [t, metrics[t] ? `http://localhost:${metrics[t]}/metrics` : 'off']),
      );
      logger.info({ targets: [...children.keys()], http: config.PORT, grpc_base_port: config.GRPC_BASE_PORT, metrics: scrape }, 'started');
      if (process.stdout.isTTY)
        process.stdout.write(
          `Metrics per target:\n${Object.entries(scrape)
            .map(([t, url]) => `  ${t.padEnd(13)} ${url}`)
            .join('\n')}\n`,
        );
    }
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stopAll('SIGTERM'));
}

main();
