import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import { openAmqpBus, type AmqpBusOptions } from './amqp.js';
import type { Bus, BusOptions } from './bus.js';
import { resolveMaxDeliveries, type BusLogger } from './common.js';
import type { Metrics } from '../metrics/metrics.js';
import { observeBus } from './observed.js';
import { openEmbeddedBus, type EmbeddedBusOptions } from './embedded.js';

export type { Bus, BusOptions, ConsumeOptions, Delivery, MessageEnvelope, SendOptions, Subscription, WorkHandler } from './bus.js';
export type { AmqpBusOptions } from './amqp.js';
export type { EmbeddedBusOptions } from './embedded.js';
export type { BusLogger } from './common.js';

export type OpenBusOptions = BusOptions & {
  /** Required by the embedded bus (no `amqpUrl`); it keeps its queues in this store. */
  store?: Store;
  /** Gets no message bodies: ids, queues and counts only. Pass a child bound to `component: 'bus'`. */
  logger?: BusLogger;
  /** Counts each work-queue outcome per queue. */
  metrics?: Metrics;
} & Omit<Partial<AmqpBusOptions>, keyof BusOptions | 'logger'> &
  Omit<Partial<EmbeddedBusOptions>, keyof BusOptions | 'logger' | 'store'>;

/** RabbitMQ when `amqpUrl` is set, otherwise the embedded bus on `store`; either carries the request context in headers. */
export async function openBus(options: OpenBusOptions): Promise<Bus> {
  const maxDeliveries = resolveMaxDeliveries(options);
  if (options.amqpUrl)
    return observeBus(await openAmqpBus({ ...options, amqpUrl: options.amqpUrl }), { metrics: options.metrics, maxDeliveries });
  if (!options.store) {
    throw new AppError('internal', 'The embedded message bus needs a store; pass `store` or set `amqpUrl`.');
  }
  return observeBus(await openEmbeddedBus({ ...options, store: options.store }), { metrics: options.metrics, maxDeliveries });
}
