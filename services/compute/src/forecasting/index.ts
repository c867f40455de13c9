/**
 * Forecast generation, wired for the compute module: the GenerateForecasts,
 * ListForecastSeries, ListForecastRuns and GetForecastRun handlers, the chunk workers on the bus, and the sweep.
 */
import type { Bus, CallContext, Clients, Collection, Logger, Metrics, Store, Subscription } from '@supply/kit';
import { supply_compute_v1 as pb } from '@supply/contracts';
import type { ModelRunDoc } from '../runs/repository';
import { ForecastDiagnostics } from './diagnostics';
import type { LatestForecasts } from './latest';
import { IdempotencyKeys } from './idempotency';
import { openForecastCollections } from './repository';
import { ForecastService } from './service';
import { FORECAST_QUEUE, ForecastWorker } from './worker';

/** Chunks one process works on at once (fitting is CPU work; more processes, more throughput). */
export const CHUNK_PREFETCH = 2;
const SWEEP_INTERVAL_MS = 15_000;

export interface Forecasting {
  handlers: {
    generateForecasts(request: pb.GenerateForecastsRequest, ctx: CallContext): Promise<pb.GenerateForecastsResponse>;
    listForecastSeries(request: pb.ListForecastSeriesRequest, ctx: CallContext): Promise<pb.ListForecastSeriesResponse>;
    listForecastRuns(request: pb.ListForecastRunsRequest, ctx: CallContext): Promise<pb.ListForecastRunsResponse>;
    getForecastRun(request: pb.GetForecastRunRequest, ctx: CallContext): Promise<pb.GetForecastRunResponse>;
  };
  /** Starts this process's chunk workers and the sweep. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function openForecasting(deps: {
  store: Store;
  modelRuns: Collection<ModelRunDoc>;
  bus: Bus;
  clients: Clients;
  logger: Logger;
  metrics?: Metrics;
  latest?: LatestForecasts;
}): Promise<Forecasting> {
  const { store, modelRuns, bus, clients } = deps;
  const logger = deps.logger.child({ component: 'forecasting' });
  const forecasts = await openForecastCollections(store);
  const keys = new IdempotencyKeys(clients.workflows, 'forecast', pb.GenerateForecastsResponse, logger);
  const worker = new ForecastWorker({
    forecasts,
    modelRuns,
    latest: deps.latest,
    sales: clients.transactional,
    bus,
    logger,
    metrics: deps.metrics,
  });
  const service = new ForecastService({ forecasts, modelRuns, keys, clients, bus, worker, logger });
  const diagnostics = new ForecastDiagnostics(forecasts);
  let subscription: Subscription | undefined;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> = Promise.resolve();
  const sweep = () => {
    sweeping = worker.sweep().then(
      () => undefined,
      (err: unknown) => logger.warn({ err }, 'forecast sweep failed'),
    );
  };
  return {
    handlers: {
      generateForecasts: (request, ctx) => service.generate(request, ctx),
      listForecastSeries: (request, ctx) => service.listSeries(request, ctx),
      listForecastRuns: (request, ctx) => diagnostics.listRuns(request, ctx),
      getForecastRun: (request, ctx) => diagnostics.getRun(request, ctx),
    },
    async start() {
      subscription = await bus.consume(FORECAST_QUEUE, worker.handle, { prefetch: CHUNK_PREFETCH });
      timer = setInterval(sweep, SWEEP_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await sweeping;
      await subscription?.close();
    },
  };
}
