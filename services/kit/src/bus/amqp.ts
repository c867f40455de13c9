/**
 * The RabbitMQ bus (amqplib).
 *
 * Topology, every name prefixed by `<namespace>.` when a namespace is set:
 * - work queue `<queue>`: durable quorum queue, `x-delivery-limit` = maxDeliveries - 1
 *   (RabbitMQ dead-letters once a message was returned more than the limit, so the
 *   handler runs exactly maxDeliveries times), dead-lettering through the direct
 *   exchange `dead-letter` with routing key `<queue>`. Dead-lettering is at-least-once
 *   (`x-dead-letter-strategy`, which needs `x-overflow: reject-publish`) on RabbitMQ
 *   3.10 and later, at-most-once on older brokers, which lack the strategy.
 * - retry queue `<queue>.retry`: durable classic queue without consumers. A failed message
 *   that is to be tried again is published here with a per-message TTL (the backoff) and
 *   its failure history in headers, then acked; on expiry it dead-letters through the
 *   default exchange back to `<queue>`. A retryable failure thus never burns the delivery
 *   limit. Expiry is in queue order, so a message waits at most the largest backoff.
 * - dead queue `<queue>.dead`: durable classic queue bound to `dead-letter`. Classic,
 *   because a quorum queue would count every browse as a delivery and, on brokers with a
 *   default delivery limit, eventually drop what it holds.
 * - topic `<topic>`: durable fanout exchange `topic.<topic>`; each subscriber binds its
 *   own exclusive auto-delete queue `topic.<topic>.<uuid>` to it.
 *
 * One connection carries a confirm channel for send/publish, a channel for declarations
 * (a refused declaration closes only that one) and one channel per consumer and per
 * subscriber, each with its own prefetch. When the connection drops, it reconnects with
 * capped exponential backoff and jitter, redeclares on first use and re-attaches every consumer
 * and subscriber; sends made meanwhile wait up to `sendTimeoutMs`.
 */
import { createHash, randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type Message, type Options } from 'amqplib';
import { AppError } from '../errors.js';
import type {
  Bus,
  BusOptions,
  ConsumeOptions,
  Delivery,
  MessageEnvelope,
  QueueStats,
  SendOptions,
  Subscription,
  SubscribeOptions,
  WorkHandler,
} from './bus.js';
import {
  assertLimit,
  assertName,
  backoffMs,
  decideOnFailure,
  deliveryWithVerdict,
  DEFAULT_DRAIN_TIMEOUT_MS,
  deadQueueOf,
  decodeBody,
  defaultLogger,
  encodeBody,
  errorMessage,
  inDeliveryContext,
  namespaced,
  replayedHeaders,
  resolvePrefetch,
  resolveRetryPolicy,
  settleWithin,
  Timers,
  unfinishedDelivery,
  type BusLogger,
  type FailureDecision,
  type FailureHistory,
  type RetryPolicy,
} from './common.js';

export interface AmqpBusOptions extends BusOptions {
  amqpUrl: string;
  /** Gets no message bodies: ids, queues and counts only. Pass a child bound to `component: 'bus'`. */
  logger?: BusLogger;
  /** How long send/publish wait for the broker (including an outage) before failing `unavailable`. */
  sendTimeoutMs?: number;
  /** How long openAmqpBus keeps trying to reach the broker at start. */
  connectTimeoutMs?: number;
  /** Reconnect backoff: first delay, doubled per failed attempt up to the cap. */
  reconnectDelayMs?: number;
  reconnectMaxDelayMs?: number;
  drainTimeoutMs?: number;
}

/** Subscribers ack after their handler settles; this bounds how many run at once. */
const SUBSCRIBER_PREFETCH = 64;
const CONNECT_ATTEMPT_TIMEOUT_MS = 10_000;
/** Lets the publisher match a broker return to the send that caused it. */
const PUBLISH_ID_HEADER = 'x-publish-id';
/** Failure history a message carries through its retry queue (see decideOnFailure). */
const PRIOR_DELIVERIES_HEADER = 'x-prior-deliveries';
const RETRIES_HEADER = 'x-retries';
const FIRST_FAILURE_HEADER = 'x-first-failure-at';
/** How long handing a failed message to its retry queue may take before it is requeued instead. */
const RETRY_PUBLISH_TIMEOUT_MS = 5_000;
/** Reply codes that mean the broker refused the request itself, so retrying cannot help. */
const PERMANENT_REPLY_CODES = new Set([403, 404, 405, 406]);

export async function openAmqpBus(options: AmqpBusOptions): Promise<Bus> {
  const bus = new AmqpBus(options);
  await bus.start();
  return bus;
}

/** One live connection and what was opened and declared on it; all of it dies with the connection. */
class Session {
  alive = true;
  private publisherChannel: Promise<ConfirmChannel> | null = null;
  private topologyChannel: Promise<Channel> | null = null;
  private readonly declared = new Map<string, Promise<void>>();
  /** Publish ids of mandatory messages the broker returned as unroutable (it returns before it confirms). */
  private readonly returned = new Set<string>();

  constructor(
    readonly model: ChannelModel,
    readonly atLeastOnceDeadLetters: boolean,
    private readonly log: BusLogger,
  ) {}

  publisher(): Promise<ConfirmChannel> {
    if (!this.publisherChannel) {
      const opened = this.open(
        'publisher',
        () => this.model.createConfirmChannel(),
        () => {
          if (this.publisherChannel === opened) this.publisherChannel = null;
        },
      );
      opened.then(
        (channel) =>
          channel.on('return', (message: Message) => {
            const id = message.properties.headers?.[PUBLISH_ID_HEADER];
            if (typeof id === 'string') this.returned.add(id);
          }),
        () => undefined,
      );
      this.publisherChannel = opened;
    }
    return this.publisherChannel;
  }

  topology(): Promise<Channel> {
    if (!this.topologyChannel) {
      const opened = this.open(
        'topology',
        () => this.model.createChannel(),
        () => {
          if (this.topologyChannel === opened) this.topologyChannel = null;
        },
      );
      this.topologyChannel = opened;
    }
    return this.topologyChannel;
  }

  /** Runs a declaration once per connection; a failed one is retried on next use. */
  declare(key: string, declare: (channel: Channel) => Promise<unknown>): Promise<void> {
    let done = this.declared.get(key);
    if (!done) {
      done = this.topology().then(async (channel) => {
        await declare(channel);
      });
      this.declared.set(key, done);
      done.catch(() => this.declared.delete(key));
    }
    return done;
  }

  /** Declares again on next use: something (an operator, a policy) removed what was declared. */
  forget(...keys: string[]): void {
    for (const key of keys) this.declared.delete(key);
  }

  /** Publishes a mandatory message and resolves on the broker's confirm; an unroutable one fails. */
  async publish(exchange: string, routingKey: string, content: Buffer, properties: Options.Publish): Promise<void> {
    const publishId = randomUUID();
    const channel = await this.publisher();
    await confirmed(channel, exchange, routingKey, content, {
      ...properties,
      mandatory: true,
      headers: { ...properties.headers, [PUBLISH_ID_HEADER]: publishId },
    });
    if (this.returned.delete(publishId)) throw new UnroutableError(`No queue took the message for ${routingKey || exchange}.`);
  }

  private open<C extends Channel>(role: string, create: () => Promise<C>, forget: () => void): Promise<C> {
    const opened = create().then((channel) => {
      channel.on('error', (err: Error) => this.log.warn({ err: err.message, role }, 'channel closed by the broker'));
      channel.on('close', forget);
      return channel;
    });
    opened.catch(forget);
    return opened;
  }
}

/** The queue was gone when the message arrived; redeclaring and sending again fixes it. */
class UnroutableError extends Error {}

/**
 * How long a queue found gone stays undeclared, by a sender or by a consumer the broker cancelled.
 * A quorum queue deleted and declared again under the same name before the broker has cancelled
 * its consumers (it takes some tens of milliseconds) leaves them attached to nothing, in every
 * process, without a word; after this pause each of them has been told and attaches afresh.
 */
const QUEUE_GONE_SETTLE_MS = 1_000;

class AmqpBus implements Bus {
  readonly maxDeliveries: number;
  readonly policy: RetryPolicy;
  readonly drainTimeoutMs: number;
  /** Set at shutdown: consumers hand back what they hold by then. */
  private drainDeadline = Infinity;
  readonly log: BusLogger;
  readonly timers = new Timers();
  private readonly sendTimeoutMs: number;
  private readonly consumers = new Set<Attachment>();
  private session: Session | null = null;
  private connected!: { promise: Promise<Session>; resolve: (s: Session) => void; reject: (e: Error) => void };
  private reconnecting = false;
  /** The connection attempt in progress, which close() must see through. */
  private establishing: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;

  constructor(private readonly options: AmqpBusOptions) {
    this.policy = resolveRetryPolicy(options);
    this.maxDeliveries = this.policy.maxDeliveries;
    this.sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    this.drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.log = defaultLogger(options.logger).child({ adapter: 'amqp' });
    this.resetConnected();
  }

  get closed(): boolean {
    return this.closing !== null;
  }

  name(name: string): string {
    return namespaced(this.options.namespace, name);
  }

  async start(): Promise<void> {
    const deadline = Date.now() + (this.options.connectTimeoutMs ?? 30_000);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.establish();
        return;
      } catch (err) {
        if (Date.now() >= deadline) {
          await this.close();
          throw new AppError('unavailable', `Cannot reach the message broker: ${errorMessage(err)}`);
        }
        this.log.warn({ err: errorMessage(err), attempt }, 'broker not reachable yet; retrying');
        await this.timers.sleep(this.reconnectDelay(attempt));
      }
    }
  }

  /** Half the capped exponential delay plus a random half, so processes cut off together do not reconnect in step. */
  private reconnectDelay(attempt: number): number {
    const delay = backoffMs(attempt, this.options.reconnectDelayMs ?? 100, this.options.reconnectMaxDelayMs ?? 10_000);
    return Math.round(delay / 2 + Math.random() * (delay / 2));
  }

  private resetConnected(): void {
    let resolve!: (s: Session) => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<Session>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Nobody may be waiting when close() rejects it.
    promise.catch(() => undefined);
    this.connected = { promise, resolve, reject };
  }

  /** Opens a connection, then re-attaches every live consumer and subscriber to it. */
  private establish(): Promise<void> {
    const attempt = this.connectOnce();
    this.establishing = attempt.catch(() => undefined);
    return attempt;
  }

  private async connectOnce(): Promise<void> {
    const model = await amqp.connect(this.options.amqpUrl, {
      clientProperties: { connection_name: `bus:${this.options.namespace ?? 'default'}` },
      // Bounds the TCP and AMQP handshake, so a silent host cannot stall a reconnect or close().
      timeout: CONNECT_ATTEMPT_TIMEOUT_MS,
    });
    const version = String(model.connection.serverProperties.version ?? '');
    const session = new Session(model, supportsAtLeastOnceDeadLetters(version), this.log);
    model.on('error', (err: Error) => this.log.warn({ err: err.message }, 'broker connection error'));
    model.on('close', (err?: Error) => this.onConnectionLost(session, err));
    model.on('blocked', (reason: string) => this.log.warn({ reason }, 'broker blocked publishing'));
    model.on('unblocked', () => this.log.info('broker unblocked publishing'));
    if (this.closed) {
      session.alive = false;
      await model.close().catch(() => undefined);
      return;
    }
    this.session = session;
    this.log.info({ broker: version }, 'connected to the message broker');
    await Promise.all([...this.consumers].map((consumer) => consumer.attach(session).catch(() => undefined)));
    if (session.alive) this.connected.resolve(session);
  }

  private onConnectionLost(session: Session, err?: Error): void {
    session.alive = false;
    if (this.session !== session) return;
    this.session = null;
    this.resetConnected();
    if (this.closed) return;
    this.log.warn({ err: err?.message }, 'lost the broker connection; reconnecting');
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    try {
      for (let attempt = 0; !this.closed && !this.session; attempt++) {
        await this.timers.sleep(this.reconnectDelay(attempt));
        if (this.closed) return;
        try {
          await this.establish();
        } catch (err) {
          this.log.warn({ err: errorMessage(err), attempt }, 'reconnecting to the broker failed');
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  /** The live session, or waits for the next one until `deadline`. */
  async sessionBy(deadline: number): Promise<Session> {
    if (this.closed) throw new AppError('unavailable', 'The message bus is closed.');
    if (this.session?.alive) return this.session;
    return beforeDeadline(this.connected.promise, deadline, 'The message broker is unreachable.');
  }

  /**
   * Runs `attempt` on a live session until it succeeds, retrying across reconnects until
   * the deadline. Broker refusals (bad arguments, access) fail at once.
   */
  private async withSession<R>(what: string, attempt: (session: Session) => Promise<R>, timeoutMs = this.sendTimeoutMs): Promise<R> {
    const deadline = Date.now() + timeoutMs;
    for (let tries = 0; ; tries++) {
      const session = await this.sessionBy(deadline);
      try {
        return await beforeDeadline(attempt(session), deadline, `The message broker did not answer in time to ${what}.`);
      } catch (err) {
        if (err instanceof AppError) throw err;
        const code = (err as { code?: unknown }).code;
        if (typeof code === 'number' && PERMANENT_REPLY_CODES.has(code)) {
          throw new AppError('internal', `The message broker refused to ${what}: ${errorMessage(err)}`);
        }
        if (Date.now() >= deadline) {
          throw new AppError('unavailable', `Could not ${what} before the timeout: ${errorMessage(err)}`);
        }
        this.log.debug({ err: errorMessage(err), tries }, `retrying ${what}`);
        // A queue found gone is declared again only once the broker has cancelled its consumers (see QUEUE_GONE_SETTLE_MS).
        const pause = err instanceof UnroutableError ? QUEUE_GONE_SETTLE_MS : backoffMs(tries, 20, 500);
        await this.timers.sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
      }
    }
  }

  async declareQueue(session: Session, queue: string): Promise<void> {
    const name = this.name(queue);
    const args = workQueueArguments(name, this.name('dead-letter'), this.maxDeliveries, session.atLeastOnceDeadLetters);
    await this.declareDeadQueue(session, queue);
    await session.declare(`queue:${name}`, (channel) => channel.assertQueue(name, { durable: true, arguments: args }));
    await session.declare(`retry:${name}`, (channel) =>
      channel.assertQueue(retryQueueOf(name), { durable: true, arguments: retryQueueArguments(name) }),
    );
  }

  forgetQueue(session: Session, queue: string): void {
    const name = this.name(queue);
    session.forget(`queue:${name}`, `dead:${name}`, `retry:${name}`);
  }

  declareDeadQueue(session: Session, queue: string): Promise<void> {
    const name = this.name(queue);
    const exchange = this.name('dead-letter');
    const dead = deadQueueOf(name);
    return session.declare(`dead:${name}`, async (channel) => {
      await channel.assertExchange(exchange, 'direct', { durable: true });
      await channel.assertQueue(dead, { durable: true });
      await channel.bindQueue(dead, exchange, name);
    });
  }

  declareTopic(session: Session, topic: string): Promise<string> {
    const exchange = this.name(`topic.${topic}`);
    return session
      .declare(`topic:${exchange}`, (channel) => channel.assertExchange(exchange, 'fanout', { durable: true }))
      .then(() => exchange);
  }

  async send<T>(queue: string, body: T, options?: SendOptions): Promise<void> {
    assertName('queue', queue);
    const content = Buffer.from(encodeBody(body));
    const properties: Options.Publish = {
      persistent: true,
      messageId: options?.messageId ?? randomUUID(),
      contentType: 'application/json',
      timestamp: Math.floor(Date.now() / 1000),
      ...(options?.headers && { headers: { ...options.headers } }),
    };
    await this.withSession(`send to ${queue}`, async (session) => {
      await this.declareQueue(session, queue);
      try {
        await session.publish('', this.name(queue), content, properties);
      } catch (err) {
        if (err instanceof UnroutableError) this.forgetQueue(session, queue);
        throw err;
      }
    });
  }

  async publish<T>(topic: string, event: T): Promise<void> {
    assertName('topic', topic);
    const content = Buffer.from(encodeBody(event));
    const properties: Options.Publish = { messageId: randomUUID(), contentType: 'application/json' };
    await this.withSession(`publish to ${topic}`, async (session) => {
      const exchange = await this.declareTopic(session, topic);
      // Not mandatory: an event nobody subscribes to is simply dropped.
      await confirmed(await session.publisher(), exchange, '', content, properties);
    });
  }

  async consume<T>(queue: string, handler: WorkHandler<T>, options?: ConsumeOptions): Promise<Subscription> {
    assertName('queue', queue);
    const consumer = new WorkConsumer(this, queue, handler as WorkHandler, resolvePrefetch(options?.prefetch), options?.onDeadLetter);
    return this.register(consumer, `consume ${queue}`);
  }

  async subscribe<T>(topic: string, handler: (event: T) => void | Promise<void>, options?: SubscribeOptions): Promise<Subscription> {
    assertName('topic', topic);
    const subscriber = new TopicSubscriber(this, topic, handler as (event: unknown) => void | Promise<void>, options?.onGap);
    return this.register(subscriber, `subscribe to ${topic}`);
  }

  /** Registers first so a reconnect during the first attach still picks it up. */
  private async register(attachment: Attachment, what: string): Promise<Subscription> {
    this.consumers.add(attachment);
    try {
      await this.withSession(what, (session) => attachment.attach(session));
    } catch (err) {
      this.consumers.delete(attachment);
      await attachment.close();
      throw err;
    }
    return {
      close: async () => {
        this.consumers.delete(attachment);
        await attachment.close();
      },
    };
  }

  /** The broker's count of ready messages and consumers (it does not tell the oldest message's age). */
  async queueStats(queue: string): Promise<QueueStats> {
    assertName('queue', queue);
    return this.withSession(
      `inspect ${queue}`,
      async (session) => {
        await this.declareQueue(session, queue);
        const ok = await (await session.topology()).checkQueue(this.name(queue));
        return { messages: ok.messageCount, consumers: ok.consumerCount };
      },
      Math.min(this.sendTimeoutMs, 5_000),
    );
  }

  /**
   * Browses the dead queue: takes up to `limit` messages unacknowledged on a private
   * channel, then closes it, which puts them all back in their places (classic queue).
   * Concurrent browsers of one dead queue may each see only part of it.
   */
  async deadLetters<T>(queue: string, limit = 100): Promise<Array<{ messageId: string; body: T }>> {
    assertName('queue', queue);
    assertLimit(limit);
    const dead = deadQueueOf(this.name(queue));
    return this.withSession(`read dead letters of ${queue}`, async (session) => {
      await this.declareDeadQueue(session, queue);
      const channel = await session.model.createChannel();
      channel.on('error', (err: Error) => this.log.warn({ err: err.message }, 'dead-letter browse channel closed'));
      const found: Array<{ messageId: string; body: T }> = [];
      try {
        while (found.length < limit) {
          const message = await channel.get(dead, { noAck: false });
          if (message === false) break;
          found.push({ messageId: messageIdOf(message), body: decodeBody<T>(message.content.toString()) });
        }
      } finally {
        await channel.close().catch(() => undefined);
      }
      return found;
    });
  }

  /** Takes dead letters one at a time, publishes each back to the work queue (confirmed), then acks it: a crash between the two replays it twice. */
  async replayDeadLetters(queue: string, limit = 100): Promise<number> {
    assertName('queue', queue);
    assertLimit(limit);
    const dead = deadQueueOf(this.name(queue));
    let moved = 0;
    await this.withSession(`replay dead letters of ${queue}`, async (session) => {
      // The work queue is not declared here: the process replaying may not share the consumers' delivery limit.
      await this.declareDeadQueue(session, queue);
      const channel = await session.model.createChannel();
      channel.on('error', (err: Error) => this.log.warn({ err: err.message }, 'dead-letter replay channel closed'));
      try {
        while (moved < limit) {
          const message = await channel.get(dead, { noAck: false });
          if (message === false) break;
          await session.publish('', this.name(queue), message.content, {
            persistent: true,
            messageId: messageIdOf(message),
            contentType: message.properties.contentType ?? 'application/json',
            timestamp: message.properties.timestamp,
            headers: replayedHeaders(envelopeOf(message).headers),
          });
          channel.ack(message);
          moved++;
        }
      } finally {
        await channel.close().catch(() => undefined);
      }
    });
    return moved;
  }

  async ping(): Promise<void> {
    await this.withSession(
      'ping',
      async (session) => {
        await (await session.topology()).checkExchange('amq.fanout');
      },
      Math.min(this.sendTimeoutMs, 5_000),
    );
  }

  drainBy(deadline: number): void {
    this.drainDeadline = Math.min(this.drainDeadline, deadline);
  }

  /** How long a closing consumer may wait for its running handlers. */
  drainWindow(): number {
    return Math.max(0, Math.min(this.drainTimeoutMs, this.drainDeadline - Date.now()));
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.timers.cancelAll();
      this.connected.reject(new AppError('unavailable', 'The message bus is closed.'));
      await this.establishing;
      await Promise.all([...this.consumers].map((consumer) => consumer.close()));
      this.consumers.clear();
      const session = this.session;
      this.session = null;
      if (session) {
        session.alive = false;
        await session.model.close().catch(() => undefined);
      }
    })();
    return this.closing;
  }
}

/** A consumer or subscriber: something that must be re-attached to every new connection. */
abstract class Attachment {
  protected channel: Channel | null = null;
  protected session: Session | null = null;
  protected closed = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly retries = new Timers();
  private failures = 0;
  /** Set when the broker cancelled us: the next attach waits QUEUE_GONE_SETTLE_MS. */
  private queueGone = false;
  private readonly running = new Set<Promise<void>>();
  /** Deliveries can finish before open() records the channel, so liveness is tracked per channel. */
  private readonly closedChannels = new WeakSet<Channel>();

  constructor(protected readonly bus: AmqpBus) {}

  /** Attaches to `session` unless already attached there; serialised so it never attaches twice. */
  attach(session: Session): Promise<void> {
    const run = this.chain.then(async () => {
      if (this.closed || !session.alive || (this.session === session && this.channel)) return;
      try {
        await this.open(session);
        this.failures = 0;
      } catch (err) {
        this.bus.log.warn({ err: errorMessage(err), target: this.target }, 'attaching to the broker failed');
        this.scheduleRetry(session);
        throw err;
      }
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  protected abstract get target(): string;
  protected abstract start(channel: Channel, session: Session): Promise<void>;

  private async open(session: Session): Promise<void> {
    const channel = await session.model.createChannel();
    channel.on('error', (err: Error) =>
      this.bus.log.warn({ err: err.message, target: this.target }, 'consumer channel closed by the broker'),
    );
    channel.on('close', () => {
      this.closedChannels.add(channel);
      this.onChannelClosed(channel, session);
    });
    try {
      await this.start(channel, session);
    } catch (err) {
      await channel.close().catch(() => undefined);
      throw err;
    }
    if (this.closed || !session.alive) {
      await channel.close().catch(() => undefined);
      return;
    }
    this.channel = channel;
    this.session = session;
  }

  /** A channel lost while its connection lives (queue deleted, broker-side error) is reopened here. */
  private onChannelClosed(channel: Channel, session: Session): void {
    if (this.channel !== channel) return;
    this.channel = null;
    if (!this.closed && session.alive) this.scheduleRetry(session);
  }

  private scheduleRetry(session: Session): void {
    if (this.closed || !session.alive) return;
    let delay = backoffMs(this.failures++, 100, 10_000);
    if (this.queueGone) {
      this.queueGone = false;
      delay = Math.max(delay, QUEUE_GONE_SETTLE_MS);
    }
    this.retries.after(delay, () => {
      this.attach(session).catch(() => undefined);
    });
  }

  /** Handler work is tracked so close() can let it finish before the channel goes. */
  protected track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  /** The broker cancelled us (e.g. the queue was deleted): drop the channel and attach afresh, once the queue has settled. */
  protected cancelled(channel: Channel): void {
    this.bus.log.warn({ target: this.target }, 'the broker cancelled the consumer; re-attaching');
    this.queueGone = true;
    void channel.close().catch(() => undefined);
  }

  /** Acks or nacks on the channel the message came from; if that channel is gone the broker already requeued it. */
  protected settle(channel: Channel, message: ConsumeMessage, outcome: 'ack' | 'requeue' | 'reject'): void {
    if (this.closedChannels.has(channel)) {
      this.bus.log.debug({ target: this.target }, 'channel gone before the outcome; the broker redelivers the message');
      return;
    }
    try {
      if (outcome === 'ack') channel.ack(message);
      else channel.nack(message, false, outcome === 'requeue');
    } catch (err) {
      this.bus.log.debug(
        { err: errorMessage(err), target: this.target },
        'settling on a closing channel failed; the broker redelivers the message',
      );
    }
  }

  /** Stops deliveries, lets running handlers finish for a while, then closes the channel (requeueing the rest). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.retries.cancelAll();
    await this.chain;
    const channel = this.channel;
    if (channel) await this.stop(channel).catch(() => undefined);
    const drained = await settleWithin(Promise.all([...this.running]), this.bus.drainWindow());
    if (!drained)
      this.bus.log.warn(
        { target: this.target, messages: this.running.size },
        'handlers still running at close; the broker requeues their messages',
      );
    this.channel = null;
    if (channel) await channel.close().catch(() => undefined);
  }

  protected abstract stop(channel: Channel): Promise<void>;
}

class WorkConsumer extends Attachment {
  private consumerTag: string | null = null;

  constructor(
    bus: AmqpBus,
    private readonly queue: string,
    private readonly handler: WorkHandler,
    private readonly prefetch: number,
    private readonly onDeadLetter: ConsumeOptions['onDeadLetter'],
  ) {
    super(bus);
  }

  protected get target(): string {
    return this.queue;
  }

  protected async start(channel: Channel, session: Session): Promise<void> {
    await this.bus.declareQueue(session, this.queue);
    await channel.prefetch(this.prefetch);
    const reply = await channel.consume(
      this.bus.name(this.queue),
      (message) => {
        if (message !== null) {
          this.track(this.handle(channel, session, message));
          return;
        }
        this.bus.forgetQueue(session, this.queue);
        this.cancelled(channel);
      },
      { noAck: false },
    );
    this.consumerTag = reply.consumerTag;
  }

  protected async stop(channel: Channel): Promise<void> {
    if (this.consumerTag) await channel.cancel(this.consumerTag);
  }

  private async handle(channel: Channel, session: Session, message: ConsumeMessage): Promise<void> {
    const history = failureHistoryOf(message);
    const delivery = deliveryWithVerdict(
      { messageId: messageIdOf(message), deliveryCount: history.deliveryCount },
      history,
      this.bus.policy,
    );
    let body: unknown;
    try {
      body = decodeBody(message.content.toString());
    } catch (err) {
      // It can never succeed, so skip the retries and dead-letter it now.
      this.bus.log.error(
        { err: errorMessage(err), queue: this.queue, messageId: delivery.messageId },
        'undecodable message; dead-lettering',
      );
      this.settle(channel, message, 'reject');
      return;
    }
    if (history.deliveryCount > this.bus.maxDeliveries) {
      // Earlier copies used up the deliveries and the last one died with its process.
      await this.notifyDeadLetter(body, { ...delivery, deliveryCount: this.bus.maxDeliveries }, unfinishedDelivery());
      this.settle(channel, message, 'reject');
      return;
    }
    try {
      await inDeliveryContext(`delivery:${this.queue}:${delivery.messageId}`, () => this.handler(body, delivery, envelopeOf(message)));
    } catch (err) {
      const decision = decideOnFailure(err, history, this.bus.policy);
      if (decision.action === 'dead-letter') {
        this.bus.log.warn({ err, queue: this.queue, ...delivery }, 'handler failed for good; dead-lettering');
        await this.notifyDeadLetter(body, delivery, err);
        this.settle(channel, message, 'reject');
        return;
      }
      this.bus.log.warn(
        { err, queue: this.queue, ...delivery, retries: decision.retries, retryInMs: decision.delayMs },
        decision.counted ? 'handler failed; redelivering' : 'a dependency is unavailable; retrying later',
      );
      try {
        await this.retryLater(session, message, history, decision);
      } catch (publishErr) {
        // The broker did not take the copy: hand the message back as it is, so nothing is lost.
        this.bus.log.warn({ err: errorMessage(publishErr), queue: this.queue, ...delivery }, 'could not schedule the retry; requeueing');
        this.settle(channel, message, 'requeue');
        return;
      }
    }
    this.settle(channel, message, 'ack');
  }

  /** Puts a copy with its failure history on the retry queue; the caller acks the original once the broker confirmed it. */
  private async retryLater(
    session: Session,
    message: ConsumeMessage,
    history: FailureHistory,
    decision: Extract<FailureDecision, { action: 'retry' }>,
  ): Promise<void> {
    if (!session.alive) throw new Error('the connection is gone');
    const name = this.bus.name(this.queue);
    const headers: Record<string, unknown> = {
      // The sender's headers (request id, tenant, trace context) go with the copy, so its retry is still theirs.
      ...envelopeOf(message).headers,
      [PRIOR_DELIVERIES_HEADER]: decision.counted ? history.deliveryCount : history.deliveryCount - 1,
      [RETRIES_HEADER]: decision.retries,
    };
    if (decision.firstFailureAt !== null) headers[FIRST_FAILURE_HEADER] = decision.firstFailureAt;
    const properties: Options.Publish = {
      persistent: true,
      messageId: messageIdOf(message),
      contentType: message.properties.contentType ?? 'application/json',
      timestamp: message.properties.timestamp,
      // 0 would drop it at once if no consumer waits, which is the dead-letter path we want anyway; 1 ms keeps intent plain.
      expiration: String(Math.max(1, decision.delayMs)),
      headers,
    };
    await beforeDeadline(
      session.publish('', retryQueueOf(name), message.content, properties),
      Date.now() + RETRY_PUBLISH_TIMEOUT_MS,
      'The broker did not confirm the retry in time.',
    );
  }

  private async notifyDeadLetter(body: unknown, delivery: Delivery, failure: unknown): Promise<void> {
    if (!this.onDeadLetter) return;
    try {
      await this.onDeadLetter(body, delivery, failure);
    } catch (err) {
      this.bus.log.error({ err: errorMessage(err), queue: this.queue, messageId: delivery.messageId }, 'the dead-letter hook failed');
    }
  }
}

class TopicSubscriber extends Attachment {
  private consumerTag: string | null = null;

  constructor(
    bus: AmqpBus,
    private readonly topic: string,
    private readonly handler: (event: unknown) => void | Promise<void>,
    private readonly onGap?: () => void,
  ) {
    super(bus);
  }

  /** Whether a queue of this subscriber has been consumed before (a later attach follows a gap). */
  private attachedBefore = false;

  protected get target(): string {
    return `topic ${this.topic}`;
  }

  protected async start(channel: Channel, session: Session): Promise<void> {
    const exchange = await this.bus.declareTopic(session, this.topic);
    await channel.prefetch(SUBSCRIBER_PREFETCH);
    // A fresh name per attach: the queue of a dropped connection may not be gone yet.
    const { queue } = await channel.assertQueue(`${exchange}.${randomUUID()}`, { exclusive: true, autoDelete: true, durable: false });
    await channel.bindQueue(queue, exchange, '');
    const reply = await channel.consume(
      queue,
      (message) => {
        if (message === null) this.cancelled(channel);
        else this.track(this.handle(channel, message));
      },
      { noAck: false },
    );
    this.consumerTag = reply.consumerTag;
    // The queue is new on every attach: what was published between the last one and this one is gone.
    if (this.attachedBefore && this.onGap) {
      try {
        this.onGap();
      } catch (err) {
        this.bus.log.error({ err, topic: this.topic }, 'gap handler failed');
      }
    }
    this.attachedBefore = true;
  }

  protected async stop(channel: Channel): Promise<void> {
    if (this.consumerTag) await channel.cancel(this.consumerTag);
  }

  private async handle(channel: Channel, message: ConsumeMessage): Promise<void> {
    try {
      await inDeliveryContext(`event:${this.topic}`, () => this.handler(decodeBody(message.content.toString())));
    } catch (err) {
      this.bus.log.error({ err, topic: this.topic }, 'event handler failed');
    }
    this.settle(channel, message, 'ack');
  }
}

/** The arguments of a work queue; they are fixed at first declaration, so every bus on a namespace must agree. */
export function workQueueArguments(
  name: string,
  deadLetterExchange: string,
  maxDeliveries: number,
  atLeastOnce: boolean,
): Record<string, unknown> {
  const args: Record<string, unknown> = {
    'x-queue-type': 'quorum',
    // RabbitMQ dead-letters when a message was returned more times than the limit.
    'x-delivery-limit': maxDeliveries - 1,
    'x-dead-letter-exchange': deadLetterExchange,
    'x-dead-letter-routing-key': name,
  };
  if (atLeastOnce) {
    args['x-dead-letter-strategy'] = 'at-least-once';
    args['x-overflow'] = 'reject-publish';
  }
  return args;
}

/** A blocked broker can hold a confirm forever; the caller's deadline still holds. */
async function beforeDeadline<R>(work: Promise<R>, deadline: number, message: string): Promise<R> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('unavailable', message)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Publishes and resolves on the broker's confirm; a nack means the broker did not take it. */
function confirmed(
  channel: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  properties: Options.Publish,
): Promise<void> {
  return new Promise((resolve, reject) => {
    channel.publish(exchange, routingKey, content, properties, (err: unknown) => {
      if (!err) resolve();
      else if (err instanceof Error && err.message === 'message nacked')
        reject(new AppError('unavailable', 'The message broker refused the message.'));
      else reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
}

/** The sender's string headers (the broker's own and the publish id are not the sender's). */
export function envelopeOf(message: Pick<ConsumeMessage, 'properties'>): MessageEnvelope {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(message.properties.headers ?? {})) {
    if (typeof value === 'string' && !key.startsWith('x-delivery') && key !== PUBLISH_ID_HEADER) headers[key] = value;
  }
  const stamp = Number(message.properties.timestamp);
  return { headers, sentAt: Number.isFinite(stamp) && stamp > 0 ? stamp * 1000 : undefined };
}

/** Where a message that was never delivered before waits out its backoff. */
export function retryQueueOf(queue: string): string {
  return `${queue}.retry`;
}

/** The retry queue hands expired messages back to the work queue through the default exchange. */
export function retryQueueArguments(workQueue: string): Record<string, unknown> {
  return { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': workQueue };
}

/**
 * Quorum queues count returns of this copy in `x-delivery-count` (absent on the first
 * delivery); a copy that came through the retry queue adds the deliveries before it.
 */
export function deliveryCountOf(message: Pick<ConsumeMessage, 'fields' | 'properties'>): number {
  const headers = message.properties.headers ?? {};
  const prior = nonNegative(headers[PRIOR_DELIVERIES_HEADER]);
  const returns = nonNegative(headers['x-delivery-count']);
  if (returns > 0) return prior + returns + 1;
  return prior + (message.fields.redelivered ? 2 : 1);
}

export function failureHistoryOf(message: Pick<ConsumeMessage, 'fields' | 'properties'>): FailureHistory {
  const headers = message.properties.headers ?? {};
  const first = Number(headers[FIRST_FAILURE_HEADER]);
  return {
    deliveryCount: deliveryCountOf(message),
    retries: nonNegative(headers[RETRIES_HEADER]),
    firstFailureAt: Number.isFinite(first) && first > 0 ? first : null,
  };
}

function nonNegative(value: unknown): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** Messages published by other clients may lack an id; a content hash is at least stable across redeliveries. */
function messageIdOf(message: { content: Buffer; properties: { messageId?: unknown } }): string {
  const id = message.properties.messageId;
  if (typeof id === 'string' && id !== '') return id;
  return `sha256:${createHash('sha256').update(message.content).digest('hex').slice(0, 32)}`;
}

/** `x-dead-letter-strategy: at-least-once` arrived in RabbitMQ 3.10. */
export function supportsAtLeastOnceDeadLetters(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return major > 3 || (major === 3 && minor >= 10);
}
