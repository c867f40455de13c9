import type { Config } from '../config/config';
import type { Logger } from '../log';
import type { Metrics } from './metrics';
import { serveMetrics, type MetricsServer } from './server';

export type MetricsEndpoint = MetricsServer;

/**
 * Serves the registry on METRICS_PORT. A port the operator chose must be free (start-up
 * fails otherwise); the default one may be held by a sibling process on the same host,
 * which then serves alone while this one warns.
 */
export async function startMetricsEndpoint(metrics: Metrics, config: Config, logger: Logger): Promise<MetricsEndpoint | undefined> {
  if (config.metricsPort === 0) return undefined;
  try {
    const served = await serveMetrics(metrics, config.metricsPort);
    logger.debug({ port: served.port }, 'metrics listening');
    return served;
  } catch (err) {
    const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    if (inUse && config.METRICS_PORT === undefined) {
      logger.warn({ port: config.metricsPort }, "default metrics port in use; set METRICS_PORT to serve this process's metrics");
      return undefined;
    }
    throw new Error(`METRICS_PORT ${config.metricsPort} cannot be served: ${(err as Error).message}`, { cause: err });
  }
}
