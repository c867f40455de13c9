import {
  supply_compute_v1,
  supply_reference_v1,
  supply_tokens_v1,
  supply_workflows_v1,
  grpc_health_v1,
  TransactionalService,
} from '@supply/contracts';
import type { Config, ServiceName } from './config/config';
import { createClient, type PromiseClient } from './grpc/client';
import { clientObserver } from './metrics/grpc';
import type { Metrics } from './metrics/metrics';

export const SERVICE_DEFINITIONS = {
  tokens: supply_tokens_v1.TokenServiceService,
  reference: supply_reference_v1.ReferenceServiceService,
  // The generated definition with a hand-written codec on its hot read (contracts/src/sales-codec.ts).
  transactional: TransactionalService,
  compute: supply_compute_v1.ComputeServiceService,
  workflows: supply_workflows_v1.WorkflowServiceService,
} as const;

/** Fully qualified gRPC service names, as health checks and reflection know them. */
export const SERVICE_FQN: Record<ServiceName, string> = {
  tokens: 'supply.tokens.v1.TokenService',
  reference: 'supply.reference.v1.ReferenceService',
  transactional: 'supply.transactional.v1.TransactionalService',
  compute: 'supply.compute.v1.ComputeService',
  workflows: 'supply.workflows.v1.WorkflowService',
};

export type Clients = { [S in ServiceName]: PromiseClient<(typeof SERVICE_DEFINITIONS)[S]> } & {
  health(service: ServiceName): Promise<boolean>;
  close(): void;
};

/** Typed clients for every peer, created on first use, each call with the configured deadline. */
export function createClients(config: Config, metrics?: Metrics): Clients {
  const cache = new Map<string, { close(): void }>();
  const get = (service: ServiceName) => {
    let client = cache.get(service);
    if (!client) {
      client = createClient(SERVICE_DEFINITIONS[service], config.peers[service], {
        credential: config.serviceCredential,
        deadlineMs: config.GRPC_DEADLINE_MS,
        observe: metrics && clientObserver(metrics, service),
        transport: config.grpcTransport,
      });
      cache.set(service, client);
    }
    return client;
  };
  const healthClients = new Map<ServiceName, PromiseClient<typeof grpc_health_v1.HealthService>>();
  const clients = {
    async health(service: ServiceName) {
      let h = healthClients.get(service);
      if (!h) {
        h = createClient(grpc_health_v1.HealthService, config.peers[service], {
          credential: config.serviceCredential,
          deadlineMs: 2_000,
          transport: config.grpcTransport,
        });
        healthClients.set(service, h);
      }
      try {
        const res = await h.check({ service: SERVICE_FQN[service] });
        return res.status === grpc_health_v1.HealthCheckResponse_ServingStatus.SERVING;
      } catch {
        return false;
      }
    },
    close() {
      for (const c of cache.values()) c.close();
      for (const c of healthClients.values()) c.close();
      cache.clear();
      healthClients.clear();
    },
  } as Partial<Clients>;
  for (const service of Object.keys(SERVICE_DEFINITIONS) as ServiceName[]) {
    Object.defineProperty(clients, service, { get: () => get(service), enumerable: true });
  }
  return clients as Clients;
}
