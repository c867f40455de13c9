/**
 * The message bus port: durable work queues (at-least-once, ack after the work is
 * committed) and broadcast events (best effort, every live subscriber gets each one).
 * Queues and topics are typed names (`Queue<T>` from the contracts), so a message of the
 * wrong type does not compile; a plain string name carries no type.
 */
import type { Queue, Topic } from '@supply/contracts';

export interface Delivery {
  /** Stable across redeliveries; handlers use it to stay idempotent. */
  messageId: string;
  /** 1 on first delivery. */
  deliveryCount: number;
  /**
   * Whether throwing `error` from this delivery would dead-letter the message (see Bus.consume),
   * so a handler can report its work failed instead. Not enumerable; absent on hand-made deliveries.
   */
  readonly willDeadLetter?: (error: unknown) => boolean;
}

/** What travels beside a body: string headers (request id, tenant) and when it was first sent. */
export interface MessageEnvelope {
  headers: Record<string, string>;
  /** Epoch milliseconds of the first send, when the adapter knows it. */
  sentAt?: number;
}

/** `envelope` is filled by the adapters; handlers behind openBus get the request context restored from it instead. */
export type WorkHandler<T = unknown> = (body: T, delivery: Delivery, envelope?: MessageEnvelope) => Promise<void>;

export interface QueueStats {
  messages: number;
  consumers: number;
  oldestAgeSeconds?: number;
}

export interface SendOptions {
  messageId?: string;
  /** String headers carried with the message (openBus adds the sender's request id and tenant). */
  headers?: Record<string, string>;
}

export interface ConsumeOptions {
  /** Messages in flight to this consumer at once. */
  prefetch?: number;
  /**
   * Runs once just before a failed message goes to `<queue>.dead`, with the failure that
   * sent it there (a permanent one on the last allowed delivery, or a retryable one past
   * the outage window), so the owner of the work can record it. Its own failure is logged.
   */
  onDeadLetter?: (body: unknown, delivery: Delivery, error: unknown) => Promise<void>;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /**
   * Called each time the subscription is attached again after losing its place (RabbitMQ: a
   * reconnect gives it a fresh queue): broadcasts published in between never reached it, so a
   * cache kept true by them should drop what it holds. Never called by the embedded bus, which
   * loses nothing while its process lives.
   */
  onGap?: () => void;
}

export interface Bus {
  /** Resolves once the message is durably accepted (broker confirm, or stored on disk). */
  send<T>(queue: Queue<T>, body: NoInfer<T>, options?: SendOptions): Promise<void>;
  /**
   * Delivers messages to `handler`; resolving acks, throwing redelivers after a backoff
   * with full jitter. A retryable failure (see failures.ts: a dependency unavailable or
   * too slow) does not count as a delivery and is retried for `outageWindowMs` from the
   * first one; any other failure counts, and after `maxDeliveries` of them the message
   * goes to `<queue>.dead`.
   */
  consume<T>(queue: Queue<T>, handler: WorkHandler<T>, options?: ConsumeOptions): Promise<Subscription>;
  /** Broadcast to every current subscriber of the topic, in every process. */
  publish<T>(topic: Topic<T>, event: NoInfer<T>): Promise<void>;
  subscribe<T>(topic: Topic<T>, handler: (event: T) => void | Promise<void>, options?: SubscribeOptions): Promise<Subscription>;
  /** What the backend tells of a work queue: messages waiting or in flight, its consumers, the oldest message's age when known. */
  queueStats?(queue: string): Promise<QueueStats>;
  /** Reads (without consuming) the dead-lettered messages of a queue, oldest first. */
  deadLetters<T>(queue: Queue<T>, limit?: number): Promise<Array<{ messageId: string; body: T }>>;
  /**
   * Moves up to `limit` dead letters of the queue back onto it, oldest first, as fresh messages
   * (their deliveries and retries start again) with the same id and headers, plus `x-replay`
   * counting the replays (see replayOf), so the owner of the work can run it again. Resolves
   * to the number moved. At least once: a message may be moved twice if the mover dies midway.
   */
  replayDeadLetters<T>(queue: Queue<T>, limit?: number): Promise<number>;
  ping(): Promise<void>;
  /** Shutdown has begun: a closing consumer waits for its running handlers until `deadline` (epoch ms) at the latest, then hands their messages back. */
  drainBy?(deadline: number): void;
  close(): Promise<void>;
}

export interface BusOptions {
  /** `amqp://...` selects RabbitMQ; absent selects the embedded bus. */
  amqpUrl?: string;
  /** Deliveries before a message is dead-lettered. */
  maxDeliveries?: number;
  /** Prefix for queue and exchange names, so test runs and deployments stay apart. */
  namespace?: string;
  /** How long retryable failures of one message are retried before it is dead-lettered. */
  outageWindowMs?: number;
  /** Redelivery backoff: a random delay up to this, doubled per failure up to `redeliveryMaxDelayMs`. */
  redeliveryDelayMs?: number;
  redeliveryMaxDelayMs?: number;
}
