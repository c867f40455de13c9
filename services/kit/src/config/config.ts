import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { GrpcTransport } from '../grpc/transport';

export const SERVICE_NAMES = ['tokens', 'reference', 'transactional', 'compute', 'workflows'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
export const TARGETS = ['all', 'gateway', ...SERVICE_NAMES] as const;
export type Target = (typeof TARGETS)[number];

const boolFlag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const port = z.coerce.number().int().min(0).max(65535);
const url = (schemes: string[]) =>
  z.string().refine((v) => schemes.some((s) => v.startsWith(`${s}://`)), { message: `must start with ${schemes.join(':// or ')}://` });

/** Every variable the process reads, with its default. Nothing else reads process.env. */
const schema = z.object({
  PORT: port.default(8080),
  // Prometheus scrape port (default 9464, 0 turns metrics off); never the public API port.
  METRICS_PORT: port.optional(),
  GRPC_BASE_PORT: port.default(50051),
  GRPC_HOST: z.string().min(1).default('127.0.0.1'),
  GRPC_PORT: port.optional(),
  TOKENS_ADDR: z.string().optional(),
  REFERENCE_ADDR: z.string().optional(),
  TRANSACTIONAL_ADDR: z.string().optional(),
  COMPUTE_ADDR: z.string().optional(),
  WORKFLOWS_ADDR: z.string().optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  SEED_DEMO: boolFlag.optional(),
  DEMO_PASSWORD: z.string().min(8).default('demo-password-123'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // More log fields to redact, comma-separated pino paths (`user_email`, `*.email`, `req.headers["x-api-key"]`).
  LOG_REDACT: z
    .string()
    .regex(
      /^\s*(?:(?:\*|[A-Za-z_$][\w$-]*)(?:\.(?:\*|[A-Za-z_$][\w$-]*)|\["[^"\]]+"\])*\s*(?:,\s*|$))+$/,
      'must be comma-separated field paths like a.b, *.c or a["d-e"]',
    )
    .transform((v) =>
      v
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    )
    .default([]),
  MONGODB_URL: url(['mongodb', 'mongodb+srv']).optional(),
  // Each service's MongoDB database is `<prefix>_<service>`: deployments (or test runs) sharing one server each take their own prefix.
  MONGODB_DATABASE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'must be 1 to 40 letters, digits, _ or -')
    .default('supply'),
  AMQP_URL: url(['amqp', 'amqps']).optional(),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  SERVICE_CREDENTIAL: z.string().min(32, 'must be at least 32 characters').optional(),
  CURSOR_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  GRPC_REFLECTION: boolFlag.default(false),
  GRPC_LB_POLICY: z.enum(['pick_first', 'round_robin']).default('round_robin'),
  GRPC_MAX_CONNECTION_AGE_MS: z.coerce.number().int().min(1000).optional(),
  GRPC_TLS_CERT: z.string().min(1).optional(),
  GRPC_TLS_KEY: z.string().min(1).optional(),
  GRPC_TLS_CA: z.string().min(1).optional(),
  GRPC_TLS_SERVER_NAME: z.string().min(1).optional(),
  // A plaintext port serving only grpc.health.v1, for kubelet probes (they cannot speak TLS).
  GRPC_HEALTH_PORT: port.optional(),
  GRPC_DEADLINE_MS: z.coerce.number().int().min(100).default(10_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  // How long work that failed because a dependency was down is retried before it fails for good.
  OUTAGE_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(24 * 60 * 60 * 1000)
    .default(10 * 60 * 1000),
  BODY_LIMIT_KB: z.coerce.number().int().min(1).default(10_240),
  /** Gateway reference read cache: answers kept per tenant and URL, dropped on every reference write (pushed over the bus). */
  REFERENCE_CACHE: z.enum(['on', 'off']).default('on'),
  /** Bytes of answer bodies the cache keeps (least recently used go first). */
  REFERENCE_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(2 ** 31)
    .default(32 * 1024 * 1024),
  /** Safety net for a lost invalidation: no cached answer is older than this. */
  REFERENCE_CACHE_TTL_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  SYNC_JOBS_PER_TENANT: z.coerce.number().int().min(1).default(5),
  BUS_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_.-]*$/)
    .default('supply'),
  PUBLIC_BASE_URL: z.string().optional(),
  // Browser origins allowed to call the API cross-origin (comma list of scheme://host[:port]); unset: CORS off.
  CORS_ORIGINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/\s?#,*]+$/, 'must list origins as scheme://host[:port], comma separated')))
    .optional(),
  CORS_MAX_AGE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
  // The previous deployment: API requests no route of this service takes are forwarded there. Unset: off.
  LEGACY_UPSTREAM_URL: url(['http', 'https']).optional(),
  LEGACY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  // Answers at least this large are gzip or brotli compressed when the client accepts it.
  COMPRESSION_THRESHOLD_BYTES: z.coerce.number().int().min(0).default(1024),
  // Traces are exported (OTLP over HTTP, `<endpoint>/v1/traces`) only when this is set.
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']).optional(),
  // Tests only: the clock starts at this instant and runs on (e.g. past the legacy sunset).
  CLOCK_NOW: z.iso.datetime({ offset: true }).optional(),
  // Tests only: the wall-clock instant (epoch ms) at which the clock read CLOCK_NOW (default: this process's start), so processes share one clock.
  CLOCK_ORIGIN_MS: z.coerce.number().int().min(0).optional(),
});

export type Env = z.infer<typeof schema>;

export const DEFAULT_METRICS_PORT = 9464;

export interface Config extends Env {
  target: Target;
  dataDir: string;
  seedDemo: boolean;
  serviceCredential: string;
  cursorSecret: string;
  /** gRPC address (host:port) of each service, as this process reaches it. */
  peers: Record<ServiceName, string>;
  /** Port of `GET /metrics` (METRICS_PORT, default 9464, or the one start:distributed gives the target); 0 when metrics are off. */
  metricsPort: number;
  /** How internal gRPC travels (TLS, load balancing); the same for servers and clients. */
  grpcTransport: GrpcTransport;
  /** Port a service listens on in this process. */
  grpcPortOf(service: ServiceName): number;
  /** The wall clock, shifted to CLOCK_NOW when it is set; every date decision reads this. */
  now(): Date;
}

export class ConfigError extends Error {}

/** Loads configuration once: defaults < environment < options. Throws ConfigError naming the bad variable. */
export function loadConfig(
  options: Partial<Record<keyof Env, string | number | boolean>> & {
    target?: string;
    /** The metrics port when METRICS_PORT is unset (start:distributed gives each target its own); still a default: taken, it only warns. */
    defaultMetricsPort?: string | number;
  } = {},
  env: Record<string, string | undefined> = process.env,
): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) {
    const fromOptions = (options as Record<string, unknown>)[key];
    const value = fromOptions !== undefined ? String(fromOptions) : env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'configuration');
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message} (got ${JSON.stringify(raw[name])})`);
  }
  const e = parsed.data;
  const target = (options.target ?? 'all') as Target;
  if (!(TARGETS as readonly string[]).includes(target)) {
    throw new ConfigError(`Invalid configuration: --target must be one of ${TARGETS.join(', ')} (got ${JSON.stringify(target)})`);
  }
  const dataDir = resolve(e.DATA_DIR);
  const defaultMetricsPort = port.safeParse(options.defaultMetricsPort ?? DEFAULT_METRICS_PORT);
  if (!defaultMetricsPort.success) {
    throw new ConfigError(
      `Invalid configuration: --default-metrics-port must be a port (got ${JSON.stringify(options.defaultMetricsPort)})`,
    );
  }
  const metricsPort = e.METRICS_PORT ?? defaultMetricsPort.data;
  if (metricsPort !== 0 && metricsPort === e.PORT && (target === 'all' || target === 'gateway')) {
    throw new ConfigError(`Invalid configuration: METRICS_PORT must differ from PORT, the public API port (both ${metricsPort})`);
  }
  const allInOne = target === 'all';
  const secrets = allInOne ? localSecrets(dataDir) : undefined;
  const serviceCredential = e.SERVICE_CREDENTIAL ?? secrets?.serviceCredential;
  if (!serviceCredential) {
    throw new ConfigError('Invalid configuration: SERVICE_CREDENTIAL is required when a target runs alone (shared by every process)');
  }
  const cursorSecret = e.CURSOR_SECRET ?? secrets?.cursorSecret ?? serviceCredential;
  const portOf = (s: ServiceName) => e.GRPC_BASE_PORT + SERVICE_NAMES.indexOf(s);
  const clockOffsetMs = e.CLOCK_NOW ? Date.parse(e.CLOCK_NOW) - (e.CLOCK_ORIGIN_MS ?? Date.now()) : 0;
  const addrEnv: Record<ServiceName, string | undefined> = {
    tokens: e.TOKENS_ADDR,
    reference: e.REFERENCE_ADDR,
    transactional: e.TRANSACTIONAL_ADDR,
    compute: e.COMPUTE_ADDR,
    workflows: e.WORKFLOWS_ADDR,
  };
  const tlsFiles = [e.GRPC_TLS_CERT, e.GRPC_TLS_KEY, e.GRPC_TLS_CA];
  if (tlsFiles.some(Boolean) && !tlsFiles.every(Boolean)) {
    throw new ConfigError('Invalid configuration: GRPC_TLS_CERT, GRPC_TLS_KEY and GRPC_TLS_CA go together (mutual TLS)');
  }
  const grpcTransport: GrpcTransport = {
    lbPolicy: e.GRPC_LB_POLICY,
    maxConnectionAgeMs: e.GRPC_MAX_CONNECTION_AGE_MS,
    tls: e.GRPC_TLS_CERT
      ? { certFile: e.GRPC_TLS_CERT, keyFile: e.GRPC_TLS_KEY!, caFile: e.GRPC_TLS_CA!, serverName: e.GRPC_TLS_SERVER_NAME }
      : undefined,
  };
  const peers = Object.fromEntries(SERVICE_NAMES.map((s) => [s, addrEnv[s] ?? `127.0.0.1:${portOf(s)}`])) as Record<ServiceName, string>;
  return {
    ...e,
    target,
    dataDir,
    seedDemo: e.SEED_DEMO ?? allInOne,
    serviceCredential,
    cursorSecret,
    peers,
    metricsPort,
    grpcTransport,
    grpcPortOf: (s) => (target === s && e.GRPC_PORT !== undefined ? e.GRPC_PORT : portOf(s)),
    now: () => new Date(Date.now() + clockOffsetMs),
  };
}

/**
 * All-in-one mode generates its secrets on first start and keeps them under DATA_DIR,
 * so the operator CLI and a restarted process find the same ones.
 */
function localSecrets(dataDir: string): { serviceCredential: string; cursorSecret: string } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const secrets = {
    serviceCredential: randomBytes(32).toString('base64url'),
    cursorSecret: randomBytes(32).toString('base64url'),
  };
  writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}

/** Parses `--target=x` / `--target x` and `--key=value` style options from argv. */
export function parseArgs(argv: string[]): { target?: string } & Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) out[arg.slice(2, eq)] = arg.slice(eq + 1);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) out[arg.slice(2)] = argv[++i]!;
    else out[arg.slice(2)] = 'true';
  }
  return out;
}
