import { ConfigError, createLogger, exitOnSignals, loadConfig, modulesForTarget, parseArgs, runModules } from '@supply/kit';
import { ALL_MODULES } from './modules';

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let config;
  try {
    config = loadConfig({ target: args.target ?? 'all' });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.LOG_LEVEL);
  const proc = await runModules(config, logger, modulesForTarget(config.target, ALL_MODULES));
  exitOnSignals(proc, logger);
  logger.info({ target: config.target, ports: proc.ports, http: config.target === 'all' || config.target === 'gateway' ? config.PORT : undefined }, 'started');
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
