/**
 * The process's Prometheus registry and every metric family the services record. One
 * instance per process (the runner builds it and hands it to every module), so the
 * all-in-one process serves one registry. Labels are templates and small enums only:
 * never a tenant, an id, a token or a raw path.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Delivery } from '../bus/bus.js';

/** Seconds; from a fast in-process call to a slow bulk request. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Redis and memory meter calls are sub-millisecond when healthy. */
const ROUND_TRIP_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Jobs run from under a second to hours. */
const JOB_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600];

/** Why the gateway refused a request, as the `reason` label says it. */
export const REJECTION_REASONS = ['auth', 'scope', 'rate_limit', 'credits', 'validation'] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export const BUS_OUTCOMES = ['published', 'delivered', 'acknowledged', 'retried', 'dead_lettered'] as const;
export type BusOutcome = (typeof BUS_OUTCOMES)[number];

/** How a witnessed broadcast's wait ended (kit bus/witnessed.ts). */
export const BROADCAST_OUTCOMES = ['acknowledged', 'unacknowledged', 'unconfirmed', 'failed'] as const;
export type BroadcastOutcome = (typeof BROADCAST_OUTCOMES)[number];

export type GrpcSide = 'client' | 'server';

/** One work queue as its backend describes it at scrape time. */
export interface QueueSnapshot {
  queue: string;
  messages: number;
  consumers: number;
  oldestAgeSeconds?: number;
}

/** How long one look at the queues serves every queue gauge of a scrape. */
const QUEUE_SNAPSHOT_MS = 1_000;

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'supply_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'supply_http_request_duration_seconds',
    help: 'Time from the first byte of a request to the end of its answer, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly httpInFlight = new Gauge({
    name: 'supply_http_requests_in_flight',
    help: 'HTTP requests received and not yet answered.',
    registers: [this.registry],
  });
  readonly httpRejections = new Counter({
    name: 'supply_http_rejections_total',
    help: 'HTTP requests refused, by reason (auth, scope, rate_limit, credits, validation) and route template.',
    labelNames: ['reason', 'route'] as const,
    registers: [this.registry],
  });

  readonly grpcCalls = new Counter({
    name: 'supply_grpc_calls_total',
    help: 'gRPC calls finished, by side (client or server), service, method and status code.',
    labelNames: ['side', 'service', 'method', 'code'] as const,
    registers: [this.registry],
  });
  readonly grpcDuration = new Histogram({
    name: 'supply_grpc_call_duration_seconds',
    help: 'gRPC call duration, by side, service and method.',
    labelNames: ['side', 'service', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly busMessages = new Counter({
    name: 'supply_bus_messages_total',
    help: 'Work-queue messages by queue and outcome: published, delivered, acknowledged, retried, dead_lettered.',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly busHandlerDuration = new Histogram({
    name: 'supply_bus_handler_duration_seconds',
    help: 'Time a consumer spent on one delivery, by queue.',
    labelNames: ['queue'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly broadcasts = new Counter({
    name: 'supply_broadcasts_total',
    help: 'Cache-invalidating broadcasts by topic and how the wait for them ended: acknowledged (by every known subscriber), unacknowledged, unconfirmed (the bus did not confirm within the wait), failed.',
    labelNames: ['topic', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly broadcastWait = new Histogram({
    name: 'supply_broadcast_wait_seconds',
    help: 'Time a change waited for its broadcast to be acknowledged, by topic.',
    labelNames: ['topic'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly busMessageAge = new Histogram({
    name: 'supply_bus_message_age_seconds',
    help: 'Time from publishing a message to a consumer taking it, by queue.',
    labelNames: ['queue'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  private queueSource: (() => Promise<QueueSnapshot[]>) | undefined;
  private queueSnapshot: { at: number; taken: Promise<QueueSnapshot[]> } | undefined;
  private readonly queues = (): Promise<QueueSnapshot[]> => {
    if (!this.queueSource) return Promise.resolve([]);
    if (!this.queueSnapshot || Date.now() - this.queueSnapshot.at > QUEUE_SNAPSHOT_MS) {
      this.queueSnapshot = { at: Date.now(), taken: this.queueSource().catch(() => []) };
    }
    return this.queueSnapshot.taken;
  };
  readonly busQueueMessages: Gauge<'queue'> = this.queueGauge(
    'supply_bus_queue_messages',
    'Messages in a work queue (waiting or in flight), as its backend tells at scrape time.',
    (q) => q.messages,
  );
  readonly busQueueConsumers: Gauge<'queue'> = this.queueGauge(
    'supply_bus_queue_consumers',
    "Consumers of a work queue (the broker's count; the embedded bus counts this process's).",
    (q) => q.consumers,
  );
  readonly busQueueOldestAge: Gauge<'queue'> = this.queueGauge(
    'supply_bus_queue_oldest_message_age_seconds',
    'Age of the oldest message of a work queue, where the backend tells (the embedded bus).',
    (q) => q.oldestAgeSeconds,
  );

  readonly jobsStarted = new Counter({
    name: 'supply_jobs_started_total',
    help: 'Jobs created, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly jobsFinished = new Counter({
    name: 'supply_jobs_finished_total',
    help: 'Jobs ended, by kind and final status.',
    labelNames: ['kind', 'status'] as const,
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'supply_job_duration_seconds',
    help: 'Time from a job being created to its end, by kind and final status.',
    labelNames: ['kind', 'status'] as const,
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });
  readonly jobRows = new Counter({
    name: 'supply_job_rows_total',
    help: 'Rows of ended jobs, by kind and outcome (created, updated, deleted, unchanged, failed).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly jobPartsRetried = new Counter({
    name: 'supply_job_parts_retried_total',
    help: 'Job parts (sync chunks, forecast chunks, plan batches) that failed and that the bus runs again, by job kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly creditsSpent = new Counter({
    name: 'supply_metering_credits_spent_total',
    help: 'Credits spent by answered requests, by endpoint cost kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly limitRejections = new Counter({
    name: 'supply_metering_limit_rejections_total',
    help: 'Requests refused by the meter, by limit (rate or credits).',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly meterRoundTrip = new Histogram({
    name: 'supply_meter_round_trip_seconds',
    help: 'Meter (Redis or embedded) call duration, by backend, operation and result.',
    labelNames: ['backend', 'op', 'result'] as const,
    buckets: ROUND_TRIP_BUCKETS,
    registers: [this.registry],
  });

  readonly forecastSeries = new Counter({
    name: 'supply_forecast_series_total',
    help: 'Series forecast by the compute workers, by outcome (ok or failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly forecastModels = new Counter({
    name: 'supply_forecast_models_chosen_total',
    help: 'Models chosen for forecast series, by model.',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly plansComputed = new Counter({
    name: 'supply_plans_computed_total',
    help: 'Item-location supply plans computed, by outcome (planned or failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  grpc(side: GrpcSide, service: string, method: string, code: string, seconds: number): void {
    this.grpcCalls.inc({ side, service, method, code });
    this.grpcDuration.observe({ side, service, method }, seconds);
  }

  /** The bus reports its queues through this at each scrape. */
  watchQueues(source: () => Promise<QueueSnapshot[]>): void {
    this.queueSource = source;
  }

  private queueGauge(name: string, help: string, value: (q: QueueSnapshot) => number | undefined): Gauge<'queue'> {
    const queues = this.queues;
    return new Gauge({
      name,
      help,
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const q of await queues()) {
          const v = value(q);
          if (v !== undefined) this.set({ queue: q.queue }, v);
        }
      },
    });
  }

  /** Shows the kind's retries as 0 until its first one, so rates and alerts have a series from the start. */
  expectParts(kind: string): void {
    this.jobPartsRetried.inc({ kind }, 0);
  }

  /** A job part's handler failed: counted when the bus's verdict is to run it again (not to dead-letter it). */
  partFailed(kind: string, delivery: Delivery, err: unknown): void {
    if (delivery.willDeadLetter?.(err) === false) this.jobPartsRetried.inc({ kind });
  }

  /** Every outcome of a queue shows as 0 until it happens (a dead-letter alert needs the series to exist). */
  expectQueue(queue: string): void {
    for (const outcome of BUS_OUTCOMES) this.busMessages.inc({ queue, outcome }, 0);
  }

  broadcast(topic: string, outcome: BroadcastOutcome, started: bigint): void {
    this.broadcasts.inc({ topic, outcome });
    this.broadcastWait.observe({ topic }, secondsSince(started));
  }

  bus(queue: string, outcome: BusOutcome): void {
    this.busMessages.inc({ queue, outcome });
  }

  /** The text exposition of every family. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Seconds elapsed since a `process.hrtime.bigint()` reading. */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}
