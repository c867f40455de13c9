import { fileURLToPath } from 'node:url';
import { Server } from '@grpc/grpc-js';
import { SERVICE_NAMES, type Config, type ServiceName } from './config/config';
import { createClients, SERVICE_FQN } from './clients';
import { bindServer, drainServer } from './grpc/server';
import { healthService } from './grpc/health';
import { grpc_health_v1 } from '@supply/protos';
import type { Logger } from './log';
import type { ModuleDeps, ModuleName, RunningModule, ServiceModule } from './module';
import { openStore } from './store/index';
import { openBus } from './bus/index';
import { openMeter } from './meter/index';
import type { Bus } from './bus/bus';
import type { Meter } from './meter/meter';
import type { Store } from './store/store';

const PROTOS_DIR = fileURLToPath(new URL('../../../protos/', import.meta.url));

export interface RunningProcess {
  modules: Map<ModuleName, RunningModule>;
  /** gRPC port each service of this process listens on. */
  ports: Partial<Record<ServiceName, number>>;
  deps: ModuleDeps;
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
  const clients = createClients(config);
  const deps: ModuleDeps = {
    config,
    logger,
    clients,
    openStore(database) {
      const existing = stores.get(database);
      if (existing) return existing;
      const opened = openStore({ database, dataDir: config.dataDir, mongodbUrl: config.MONGODB_URL });
      stores.set(database, opened);
      return opened;
    },
    bus() {
      bus ??= (async () =>
        openBus({
          amqpUrl: config.AMQP_URL,
          namespace: config.BUS_NAMESPACE,
          store: config.AMQP_URL ? undefined : await deps.openStore('bus'),
          logger: logger.child({ component: 'bus' }),
        }))();
      return bus;
    },
    meter() {
      meter ??= openMeter({ redisUrl: config.REDIS_URL, namespace: config.BUS_NAMESPACE });
      return meter;
    },
  };

  const running = new Map<ModuleName, RunningModule>();
  const servers: Array<{ name: ServiceName; server: Server }> = [];
  const ports: Partial<Record<ServiceName, number>> = {};
  const ordered = startOrder(modules);

  const stop = async () => {
    for (const m of [...ordered].reverse()) {
      const r = running.get(m.name);
      const server = servers.find((s) => s.name === m.name)?.server;
      if (server) await drainServer(server, config.SHUTDOWN_TIMEOUT_MS);
      if (r) await r.stop().catch((err) => logger.error({ err, module: m.name }, 'module stop failed'));
    }
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
        const server = new Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.enable_channelz': 0 });
        server.addService(instance.grpc.definition, instance.grpc.implementation);
        server.addService(
          grpc_health_v1.HealthService,
          healthService(SERVICE_FQN[name], async () => (await instance.health()).ready),
        );
        if (config.GRPC_REFLECTION) await addReflection(server, instance.grpc.protoFile);
        ports[name] = await bindServer(server, config.GRPC_HOST, config.grpcPortOf(name));
        servers.push({ name, server });
        logger.info({ module: name, port: ports[name] }, 'gRPC service listening');
      }
    }
    for (const m of ordered) await running.get(m.name)!.start?.();
  } catch (err) {
    await stop();
    throw err;
  }
  return { modules: running, ports, deps, stop };
}

async function addReflection(server: Server, protoFile: string): Promise<void> {
  const [{ ReflectionService }, protoLoader] = await Promise.all([import('@grpc/reflection'), import('@grpc/proto-loader')]);
  const definition = protoLoader.loadSync(protoFile, { includeDirs: [PROTOS_DIR], keepCase: true });
  new ReflectionService(definition).addToServer(server);
}

/** Runs until SIGTERM/SIGINT, then drains and exits 0 (1 if draining failed). */
export function exitOnSignals(proc: RunningProcess, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
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
