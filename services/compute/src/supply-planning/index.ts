/** Supply plan generation (POST /supply-plans/generate): the compute service's feature around the planning engine. */
import type { Bus, CallContext, Clients, Collection, Logger, Store, Subscription } from '@supply/kit';
import type { supply_compute_v1 as pb } from '@supply/protos';
import type { ModelRunDoc } from '../runs/repository';
import { IdempotencyKeys } from '../forecasting/idempotency';
import { openPlanRepositories } from './repository';
import { CHUNKS_QUEUE, SupplyPlanService, type ChunkMessage } from './service';
import { PlanChunkWorker } from './worker';

/** Chunks one compute process plans at once. */
const CHUNK_PREFETCH = 2;
const KEY_SWEEP_MS = 60 * 60_000;

export interface SupplyPlanning {
  generate(request: pb.GenerateSupplyPlanRequest, ctx: CallContext): Promise<pb.GenerateSupplyPlanResponse>;
  /** Starts the chunk worker and dispatches runs a stopped process left undispatched. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function openSupplyPlanning(deps: { store: Store; runs: Collection<ModelRunDoc>; clients: Clients; bus: Bus; logger: Logger }): Promise<SupplyPlanning> {
  const repos = await openPlanRepositories(deps.store);
  const keys = await IdempotencyKeys.open<unknown>(deps.store, 'supply_plan_idempotency_keys');
  const logger = deps.logger.child({ feature: 'supply-planning' });
  const service = new SupplyPlanService({ ...deps, repos, keys, logger });
  const worker = new PlanChunkWorker({ ...deps, repos, logger });
  let subscription: Subscription | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  return {
    generate: (request, ctx) => service.generate(request, ctx),
    async start() {
      subscription = await deps.bus.consume<ChunkMessage>(CHUNKS_QUEUE, worker.handle, { prefetch: CHUNK_PREFETCH });
      await service.resumeUndispatched();
      sweeper = setInterval(() => void keys.sweep().catch((err) => logger.warn({ err }, 'idempotency key sweep failed')), KEY_SWEEP_MS);
      sweeper.unref();
    },
    async stop() {
      clearInterval(sweeper);
      await subscription?.close();
    },
  };
}
