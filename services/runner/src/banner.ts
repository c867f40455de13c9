import type { Config, RunningProcess } from '@supply/kit';

/** Users the demo seed creates (services/tokens seed), shown so a first-time user can log in. */
const DEMO_USERS = ['planner@demo.test', 'admin@demo.test', 'viewer@demo.test'];

export interface Banner {
  lines: string[];
  /** The same facts as fields, for the structured `ready` log line. */
  fields: Record<string, unknown>;
}

/** Where a real backend is, without the credentials its URL may carry. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol.replace(/:$/, '')}://${u.host}`;
  } catch {
    return 'configured';
  }
}

/** The start-up summary: URLs, targets, backends, and how to log in as the demo users. */
export function startupBanner(config: Config, proc: RunningProcess): Banner {
  const serving = [...proc.modules.keys()];
  const http = serving.includes('gateway');
  const api = http ? (config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `http://localhost:${config.PORT}`) : undefined;
  const metrics = proc.metricsPort !== undefined ? `http://localhost:${proc.metricsPort}/metrics` : undefined;
  const backends = {
    store: config.MONGODB_URL ? `mongodb ${where(config.MONGODB_URL)}` : `embedded (${config.dataDir})`,
    bus: config.AMQP_URL ? `rabbitmq ${where(config.AMQP_URL)}` : 'embedded',
    meter: config.REDIS_URL ? `redis ${where(config.REDIS_URL)}` : 'embedded',
  };
  const lines = [`Supply Planning Service ready (target ${config.target})`];
  if (api) {
    lines.push(`  API      ${api}/`, `  Docs     ${api}/docs`);
  }
  lines.push(
    `  Metrics  ${metrics ?? (config.metricsPort === 0 ? 'off (METRICS_PORT=0)' : `not served (port ${config.metricsPort} in use)`)}`,
    `  Running  ${serving.join(', ')}`,
    `  Backends store ${backends.store}, bus ${backends.bus}, meter ${backends.meter}`,
    `  Traces   ${config.OTEL_EXPORTER_OTLP_ENDPOINT ? `OTLP to ${where(config.OTEL_EXPORTER_OTLP_ENDPOINT)}` : 'off (set OTEL_EXPORTER_OTLP_ENDPOINT)'}`,
  );
  let demo: Record<string, unknown> | undefined;
  if (api && config.seedDemo) {
    // Never the password itself: logs are no place for a secret, even a documented default.
    const password = 'the DEMO_PASSWORD setting (docs/configuration.md)';
    demo = { login: `${api}/demo/login`, users: DEMO_USERS };
    lines.push(`  Demo     log in at ${api}/demo/login as ${DEMO_USERS.join(', ')} with password ${password}`);
  }
  return { lines, fields: { api, docs: api && `${api}/docs`, metrics, targets: serving, backends, demo } };
}
