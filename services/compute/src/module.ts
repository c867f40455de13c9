import { adaptService, type ServiceModule } from '@supply/kit';
import { supply_compute_v1 } from '@supply/contracts';
import { openForecasting } from './forecasting/index';
import { openLatestForecasts } from './forecasting/latest';
import { openModelRuns } from './runs/repository';
import { openSupplyPlanning } from './supply-planning/index';
import { CHUNKS_QUEUE as PLAN_CHUNKS_QUEUE } from './supply-planning/service';
import { FORECAST_QUEUE } from './forecasting/worker';

/** Compute service: forecast and supply plan generation (its own database `compute`). */
export const computeModule: ServiceModule = {
  name: 'compute',
  dependencies: ['reference', 'transactional', 'workflows'],
  workQueues: [FORECAST_QUEUE, PLAN_CHUNKS_QUEUE],
  async init({ config, logger, openStore, clients, bus, metrics }) {
    const store = await openStore('compute');
    const runs = await openModelRuns(store);
    // Forecasting keeps each series' latest forecast uncertainty; supply planning sizes service-level safety stock from it.
    const latest = await openLatestForecasts(store);
    const messages = await bus();
    const supplyPlanning = await openSupplyPlanning({ store, runs, clients, bus: messages, logger, metrics, latest });
    const forecasting = await openForecasting({ store, modelRuns: runs, clients, bus: messages, logger, metrics, latest });
    const implementation = adaptService(
      supply_compute_v1.ComputeServiceService,
      {
        async listModelRuns({ job_id, limit }, ctx) {
          const tenant = ctx.requireTenant();
          const filter = job_id ? { tenant, job_id } : { tenant };
          const rows = await runs.find(filter, { sort: [['_id', -1]], limit: Math.min(Math.max(limit || 50, 1), 1000) });
          return {
            runs: rows.map((r) => ({
              id: r._id,
              kind: r.kind,
              job_id: r.job_id,
              status: r.status,
              created_at: r.created_at,
              finished_at: r.finished_at ?? '',
            })),
          };
        },
        generateSupplyPlan: (request, ctx) => supplyPlanning.generate(request, ctx),
        ...forecasting.handlers,
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: { definition: supply_compute_v1.ComputeServiceService, implementation, protoFile: 'supply/compute/v1/compute.proto' },
      async start() {
        await supplyPlanning.start();
        await forecasting.start();
      },
      async stop() {
        await supplyPlanning.stop();
        await forecasting.stop();
      },
      // Ready only with both its own database and the broker: forecast and plan runs travel the bus.
      async health() {
        const [storeOk, busOk] = await Promise.all([
          store.ping().then(
            () => true,
            () => false,
          ),
          messages.ping().then(
            () => true,
            () => false,
          ),
        ]);
        return { ready: storeOk && busOk, checks: { store: storeOk, bus: busOk } };
      },
    };
  },
};
