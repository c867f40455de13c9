import { ConfigError, createLogger, exitOnSignals, loadConfig, modulesForTarget, parseArgs, runModules, type ServiceModule } from '@supply/kit';
import { tokensModule } from '@supply/tokens';
import { referenceModule } from '@supply/reference';
import { transactionalModule } from '@supply/transactional';
import { computeModule } from '@supply/compute';
import { workflowsModule } from '@supply/workflows';
import { gatewayModule } from '@supply/gateway';

/** Every module of the system; a target picks one, `all` runs them together. */
export const ALL_MODULES: ServiceModule[] = [
  tokensModule,
  referenceModule,
  transactionalModule,
  workflowsModule,
  computeModule,
  gatewayModule,
];

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
