import { ConfigError, createLogger, exitOnSignals, loadConfig, modulesForTarget, parseArgs, runModules, startTracing } from '@supply/kit';
import { startupBanner } from './banner';
import { ALL_MODULES } from './modules';

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let config;
  try {
    // start:distributed gives each target its own default metrics port (METRICS_PORT, when set, wins).
    config = loadConfig({ target: args.target ?? 'all', defaultMetricsPort: args['default-metrics-port'] });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.LOG_LEVEL, 'supply', config.LOG_REDACT);
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? await startTracing({ serviceName: `supply-planning-${config.target}`, endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT })
    : undefined;
  const proc = await runModules(config, logger, modulesForTarget(config.target, ALL_MODULES));
  if (tracing) {
    // The last spans are flushed after everything else has drained.
    const stopModules = proc.stop;
    proc.stop = async () => {
      await stopModules();
      await tracing.shutdown().catch((err: unknown) => logger.warn({ err }, 'flushing traces failed'));
    };
  }
  exitOnSignals(proc, logger);
  logger.info(
    { target: config.target, ports: proc.ports, http: config.target === 'all' || config.target === 'gateway' ? config.PORT : undefined },
    'started',
  );
  const banner = startupBanner(config, proc);
  // People read a terminal; log collectors read the structured line.
  if (process.stdout.isTTY) process.stdout.write(`${banner.lines.join('\n')}\n`);
  logger.info({ ...banner.fields, banner: banner.lines.join('\n') }, 'ready');
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
