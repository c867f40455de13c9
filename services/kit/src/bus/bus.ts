/**
 * The message bus port: durable work queues (at-least-once, ack after the work is
 * committed) and broadcast events (best effort, every live subscriber gets each one).
 */

export interface Delivery {
  /** Stable across redeliveries; handlers use it to stay idempotent. */
  messageId: string;
  /** 1 on first delivery. */
  deliveryCount: number;
}

export type WorkHandler<T = unknown> = (body: T, delivery: Delivery) => Promise<void>;

export interface ConsumeOptions {
  /** Messages in flight to this consumer at once. */
  prefetch?: number;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface Bus {
  /** Resolves once the message is durably accepted (broker confirm, or stored on disk). */
  send<T>(queue: string, body: T, options?: { messageId?: string }): Promise<void>;
  /**
   * Delivers messages to `handler`; resolving acks, throwing redelivers. After
   * `maxDeliveries` (configured on the bus) the message goes to `<queue>.dead`.
   */
  consume<T>(queue: string, handler: WorkHandler<T>, options?: ConsumeOptions): Promise<Subscription>;
  /** Broadcast to every current subscriber of the topic, in every process. */
  publish<T>(topic: string, event: T): Promise<void>;
  subscribe<T>(topic: string, handler: (event: T) => void | Promise<void>): Promise<Subscription>;
  /** Reads (without consuming) the dead-lettered messages of a queue, oldest first. */
  deadLetters<T>(queue: string, limit?: number): Promise<Array<{ messageId: string; body: T }>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface BusOptions {
  /** `amqp://...` selects RabbitMQ; absent selects the embedded bus. */
  amqpUrl?: string;
  /** Deliveries before a message is dead-lettered. */
  maxDeliveries?: number;
  /** Prefix for queue and exchange names, so test runs and deployments stay apart. */
  namespace?: string;
}
