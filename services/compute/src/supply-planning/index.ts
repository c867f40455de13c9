/** Supply plan generation (POST /supply-plans/generate): the compute service's feature around the planning engine. */
import type { Bus, CallContext, Clients, Collection, Logger, Metrics, Store, Subscription } from '@supply/kit';
import { supply_compute_v1 as pb } from '@supply/contracts';
import type { ModelRunDoc } from '../runs/repository';
import { IdempotencyKeys } from '../forecasting/idempotency';
import { openPlanRepositories } from './repository';
import { CHUNKS_QUEUE, SupplyPlanService } from './service';
import { PlanChunkWorker } from './worker';
import { latestUncertainty } from './safety-stock';
import type { LatestForecasts } from '../forecasting/latest';

/** Chunks one compute process plans at once. */
const CHUNK_PREFETCH = 2;

export interface SupplyPlanning {
  generate(request: pb.GenerateSupplyPlanRequest, ctx: CallContext): Promise<pb.GenerateSupplyPlanResponse>;
  /** Starts the chunk worker and dispatches runs a stopped process left undispatched. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function openSupplyPlanning(deps: {
  store: Store;
  runs: Collection<ModelRunDoc>;
  clients: Clients;
  bus: Bus;
  logger: Logger;
  metrics?: Metrics;
  latest?: LatestForecasts;
}): Promise<SupplyPlanning> {
  const latest = deps.latest;
  const uncertainty = latest ? (tenant: string) => latestUncertainty(latest, tenant) : undefined;
  const repos = await openPlanRepositories(deps.store);
  const logger = deps.logger.child({ feature: 'supply-planning' });
  const keys = new IdempotencyKeys(deps.clients.workflows, 'supply_plan', pb.GenerateSupplyPlanResponse, logger);
  const service = new SupplyPlanService({ ...deps, repos, keys, logger, uncertainty });
  const worker = new PlanChunkWorker({ ...deps, repos, logger, uncertainty });
  let subscription: Subscription | undefined;
  return {
    generate: (request, ctx) => service.generate(request, ctx),
    async start() {
      subscription = await deps.bus.consume(CHUNKS_QUEUE, worker.handle, { prefetch: CHUNK_PREFETCH });
      await service.resumeUndispatched();
    },
    async stop() {
      await subscription?.close();
    },
  };
}
