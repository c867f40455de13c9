import { AppError } from '../errors.js';
import type { Store } from '../store/store.js';
import { openAmqpBus, type AmqpBusOptions } from './amqp.js';
import type { Bus, BusOptions } from './bus.js';
import type { BusLogger } from './common.js';
import { openEmbeddedBus, type EmbeddedBusOptions } from './embedded.js';

export type { Bus, BusOptions, ConsumeOptions, Delivery, Subscription, WorkHandler } from './bus.js';
export type { AmqpBusOptions } from './amqp.js';
export type { EmbeddedBusOptions } from './embedded.js';
export type { BusLogger } from './common.js';

export type OpenBusOptions = BusOptions & {
  /** Required by the embedded bus (no `amqpUrl`); it keeps its queues in this store. */
  store?: Store;
  /** Gets no message bodies: ids, queues and counts only. Pass a child bound to `component: 'bus'`. */
  logger?: BusLogger;
} & Omit<Partial<AmqpBusOptions>, keyof BusOptions | 'logger'> &
  Omit<Partial<EmbeddedBusOptions>, keyof BusOptions | 'logger' | 'store'>;

/** RabbitMQ when `amqpUrl` is set, otherwise the embedded bus on `store`. */
export async function openBus(options: OpenBusOptions): Promise<Bus> {
  if (options.amqpUrl) return openAmqpBus({ ...options, amqpUrl: options.amqpUrl });
  if (!options.store) {
    throw new AppError('internal', 'The embedded message bus needs a store; pass `store` or set `amqpUrl`.');
  }
  return openEmbeddedBus({ ...options, store: options.store });
}
