import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Server } from '@grpc/grpc-js';
import { SERVICE_NAMES, type Config, type ServiceName } from './config/config';
import { createClients, SERVICE_FQN } from './clients';
import { bindServer, drainServer } from './grpc/server';
import { serverOptions } from './grpc/transport';
import { healthService } from './grpc/health';
import { grpc_health_v1 } from '@supply/contracts';
import type { Logger } from './log';
import type { ModuleDeps, ModuleName, RunningModule, ServiceModule } from './module';
import { openStore } from './store/index';
import { openBus } from './bus/index';
import { openMeter } from './meter/index';
import type { Bus } from './bus/bus';
import type { Meter } from './meter/meter';
import type { Store } from './store/store';
import { Metrics } from './metrics/metrics';
import { instrumentService } from './metrics/grpc';
import { observeMeter } from './meter/observed';
import { startMetricsEndpoint, type MetricsEndpoint } from './metrics/endpoint';

// The compiled build copies the .proto files next to its entry point (dist/protos/); sources read protos/.
const PROTOS_DIR =
  [new URL('./protos/', import.meta.url), new URL('../../../protos/', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((dir) => existsSync(`${dir}grpc/health/v1/health.proto`)) ?? fileURLToPath(new URL('../../../protos/', import.meta.url));

export interface RunningProcess {
  modules: Map<ModuleName, RunningModule>;
  /** gRPC port each service of this process listens on. */
  ports: Partial<Record<ServiceName, number>>;
  deps: ModuleDeps;
  /** Port of `GET /metrics`, absent when METRICS_PORT is 0 or the default port was taken. */
  metricsPort?: number;
  /** Drains everything within SHUTDOWN_TIMEOUT_MS: readiness false at once, then modules in reverse start order. */
  stop(): Promise<void>;
}

/** Orders modules so that every module comes after the peers it depends on (within this process). */
export function startOrder(modules: ServiceModule[]): ServiceModule[] {
  const byName = new Map(modules.map((m) => [m.name, m]));
  const out: ServiceModule[] = [];
  const seen = new Set<string>();
  const visit = (m: ServiceModule, path: string[]) => {
    if (seen.has(m.name)) return;
    if (path.includes(m.name)) throw new Error(`module dependency cycle: ${[...path, m.name].join(' -> ')}`);
    for (const dep of m.dependencies) {
      const d = byName.get(dep);
      if (d) visit(d, [...path, m.name]);
    }
    seen.add(m.name);
    out.push(m);
  };
  for (const m of modules) visit(m, []);
  return out;
}

/** Which modules a target runs. */
export function modulesForTarget(target: Config['target'], all: ServiceModule[]): ServiceModule[] {
  if (target === 'all') return all;
  const m = all.find((x) => x.name === target);
  if (!m) throw new Error(`unknown target ${target}`);
  return [m];
}

/**
 * Starts the given modules in one process: shared resources, then each service's gRPC
 * server in dependency order, then every module's start hook. Returns a stop function that
 * drains in reverse order.
 */
export async function runModules(config: Config, logger: Logger, modules: ServiceModule[]): Promise<RunningProcess> {
  const stores = new Map<string, Promise<Store>>();
  let bus: Promise<Bus> | undefined;
  let meter: Promise<Meter> | undefined;
  const metrics = new Metrics();
  const clients = createClients(config, metrics);
  const stopping = new AbortController();
  const deps: ModuleDeps = {
    metrics,
    stopping: stopping.signal,
    config,
    logger,
    clients,
    openStore(database) {
      const existing = stores.get(database);
      if (existing) return existing;
      const opened = openStore({
        database,
        dataDir: config.dataDir,
        mongodbUrl: config.MONGODB_URL,
        databasePrefix: config.MONGODB_DATABASE_PREFIX,
      });
      stores.set(database, opened);
      return opened;
    },
    bus() {
      bus ??= (async () =>
        openBus({
          amqpUrl: config.AMQP_URL,
          namespace: config.BUS_NAMESPACE,
          outageWindowMs: config.OUTAGE_WINDOW_MS,
          store: config.AMQP_URL ? undefined : await deps.openStore('bus'),
          logger: logger.child({ component: 'bus' }),
          metrics,
          drainTimeoutMs: Math.floor(config.SHUTDOWN_TIMEOUT_MS / 2),
        }))();
      return bus;
    },
    meter() {
      meter ??= openMeter({ redisUrl: config.REDIS_URL, namespace: config.BUS_NAMESPACE }).then((m) =>
        observeMeter(m, metrics, config.REDIS_URL ? 'redis' : 'memory'),
      );
      return meter;
    },
  };

  const running = new Map<ModuleName, RunningModule>();
  // A service is SERVING once every start hook of its process has run (e.g. its demo seed).
  let startedAll = false;
  const servers: Array<{ name: ServiceName; server: Server }> = [];
  const ports: Partial<Record<ServiceName, number>> = {};
  const ordered = startOrder(modules);

  let metricsEndpoint: MetricsEndpoint | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopAll());
  const stopAll = async () => {
    const t0 = Date.now();
    const budget = config.SHUTDOWN_TIMEOUT_MS;
    // Leaves a moment of the budget for closing stores and connections after the last drain.
    const deadline = t0 + budget - Math.min(500, Math.floor(budget / 10));
    stopping.abort();
    if (bus) (await bus.catch(() => undefined))?.drainBy?.(deadline);
    const left = () => Math.max(0, deadline - Date.now());
    for (const m of [...ordered].reverse()) {
      const r = running.get(m.name);
      for (const s of servers.filter((x) => x.name === m.name)) await drainServer(s.server, left());
      // The gateway answers its in-flight requests within half the budget, so the services behind it keep the rest.
      const moduleDeadline = m.name === 'gateway' ? t0 + Math.floor(budget / 2) : deadline;
      if (r) await r.stop(moduleDeadline).catch((err) => logger.error({ err, module: m.name }, 'module stop failed'));
    }
    await metricsEndpoint?.close();
    clients.close();
    if (bus) await (await bus).close().catch(() => undefined);
    if (meter) await (await meter).close().catch(() => undefined);
    for (const s of stores.values()) await (await s).close().catch(() => undefined);
  };

  try {
    for (const m of ordered) {
      const instance = await m.init({ ...deps, logger: logger.child({ module: m.name }) });
      running.set(m.name, instance);
      if (instance.grpc && (SERVICE_NAMES as readonly string[]).includes(m.name)) {
        const name = m.name as ServiceName;
        // Nothing reads channelz; tracking it costs every call a little.
        const server = new Server({
          'grpc.max_receive_message_length': 64 * 1024 * 1024,
          'grpc.enable_channelz': 0,
          ...serverOptions(config.grpcTransport),
        });
        const health = healthService(SERVICE_FQN[name], async () => startedAll && (await instance.health()).ready, stopping.signal);
        server.addService(
          instance.grpc.definition,
          instrumentService(name, instance.grpc.definition, instance.grpc.implementation, metrics),
        );
        server.addService(grpc_health_v1.HealthService, health);
        if (config.GRPC_REFLECTION) await addReflection(server, instance.grpc.protoFile);
        ports[name] = await bindServer(server, config.GRPC_HOST, config.grpcPortOf(name), config.grpcTransport);
        servers.push({ name, server });
        if (config.GRPC_HEALTH_PORT !== undefined && config.target === name) {
          const probe = new Server({ 'grpc.enable_channelz': 0 });
          probe.addService(grpc_health_v1.HealthService, health);
          await bindServer(probe, config.GRPC_HOST, config.GRPC_HEALTH_PORT);
          servers.push({ name, server: probe });
        }
        logger.info({ module: name, port: ports[name] }, 'gRPC service listening');
      }
    }
    for (const m of ordered) await running.get(m.name)!.start?.();
    startedAll = true;
    metricsEndpoint = await startMetricsEndpoint(metrics, config, logger);
  } catch (err) {
    await stop();
    throw err;
  }
  return { modules: running, ports, deps, metricsPort: metricsEndpoint?.port, stop };
}

async function addReflection(server: Server, protoFile: string): Promise<void> {
  const [{ ReflectionService }, protoLoader] = await Promise.all([import('@grpc/reflection'), import('@grpc/proto-loader')]);
  const definition = protoLoader.loadSync(protoFile, { includeDirs: [PROTOS_DIR], keepCase: true });
  new ReflectionService(definition).addToServer(server);
}

/**
 * Runs until SIGTERM/SIGINT, then drains and exits 0 (1 if draining failed, or did not end
 * within SHUTDOWN_TIMEOUT_MS: whatever a consumer still held is redelivered after restart).
 */
export function exitOnSignals(proc: RunningProcess, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, budget_ms: proc.deps.config.SHUTDOWN_TIMEOUT_MS }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown did not finish within SHUTDOWN_TIMEOUT_MS; exiting');
      process.exit(1);
    }, proc.deps.config.SHUTDOWN_TIMEOUT_MS).unref();
    proc.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
