import type { Queue } from '@supply/contracts';
import type { ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Bus } from './bus/bus';
import type { Clients } from './clients';
import type { Config, ServiceName } from './config/config';
import type { Logger } from './log';
import type { Meter } from './meter/meter';
import type { Metrics } from './metrics/metrics';
import type { Store } from './store/store';

export type ModuleName = ServiceName | 'gateway';

/** Process-wide resources the runner builds once and hands to every module. */
export interface ModuleDeps {
  config: Config;
  logger: Logger;
  clients: Clients;
  /** Opens the module's own database (each service its own). */
  openStore(database: string): Promise<Store>;
  bus(): Promise<Bus>;
  meter(): Promise<Meter>;
  /** The process's one metrics registry, served at `GET /metrics` on METRICS_PORT. */
  metrics: Metrics;
  /** Aborted when the process begins to shut down: readiness is false from then on. */
  stopping: AbortSignal;
}

export interface HealthReport {
  ready: boolean;
  checks: Record<string, boolean>;
}

export interface RunningModule {
  grpc?: {
    definition: ServiceDefinition;
    implementation: UntypedServiceImplementation;
    /** The .proto (relative to protos/) for optional server reflection. */
    protoFile: string;
  };
  /** Called once every module of the process is initialised and serving (consumers, HTTP listen). */
  start?(): Promise<void>;
  /** Drains in-flight work and releases what the module opened; forces what is left at `deadline` (epoch ms). */
  stop(deadline?: number): Promise<void>;
  health(): Promise<HealthReport>;
}

/** One service's module definition, the same in all-in-one and separate-process modes. */
export interface ServiceModule {
  name: ModuleName;
  /** Peers this module calls; they start first in all-in-one mode. */
  dependencies: readonly ServiceName[];
  /** The work queues this module consumes (operators list and replay their dead letters by these names). */
  workQueues?: readonly Queue<unknown>[];
  init(deps: ModuleDeps): Promise<RunningModule>;
}
