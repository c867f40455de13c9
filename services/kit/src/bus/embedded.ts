/**
 * The embedded bus: work queues kept in a Store collection, broadcast kept in memory.
 * It assumes one process owns the store; that process is the broker.
 *
 * Each message is one `bus_messages` document. A consumer claims the oldest visible
 * `ready` document with one atomic findOneAndUpdate (state `inflight`, deliveryCount + 1,
 * its own claim token), deletes it when the handler resolves, and on a throw puts it back
 * as `ready` with a later `visibleAt` (backoff with full jitter; a retryable failure gives
 * its delivery back and is retried until the outage window ends), or moves it to
 * `<queue>.dead` (see decideOnFailure in common.ts). Every write after the claim
 * matches the claim token, so a delivery that was handed back cannot ack someone else's.
 * Opening a bus hands back every `inflight` document no live bus in this process owns:
 * those were in flight when an earlier process died, and count as one delivery each.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { AppError } from '../errors.js';
import { outsideTrace } from '../tracing/tracing.js';
import type { Collection, CollectionSpec, Doc, Store } from '../store/store.js';
import type { Bus, BusOptions, ConsumeOptions, Delivery, QueueStats, SendOptions, Subscription, WorkHandler } from './bus.js';
import {
  assertLimit,
  assertName,
  backoffMs,
  decideOnFailure,
  deliveryWithVerdict,
  DEFAULT_DRAIN_TIMEOUT_MS,
  deadQueueOf,
  decodeBody,
  unfinishedDelivery,
  defaultLogger,
  encodeBody,
  errorMessage,
  inDeliveryContext,
  namespaced,
  replayedHeaders,
  resolveRetryPolicy,
  resolvePrefetch,
  settleWithin,
  Timers,
  type BusLogger,
  type RetryPolicy,
} from './common.js';

export const MESSAGES_COLLECTION = 'bus_messages';

export interface EmbeddedBusOptions extends BusOptions {
  store: Store;
  /** Gets no message bodies: ids, queues and counts only. Pass a child bound to `component: 'bus'`. */
  logger?: BusLogger;
  /** Idle consumers re-check the store this often, besides being woken by sends in this process. */
  pollIntervalMs?: number;
  drainTimeoutMs?: number;
}

type MessageState = 'ready' | 'inflight';

export interface MessageDoc extends Doc {
  _id: number;
  /** Namespaced queue name; dead letters live under `<queue>.dead`. */
  queue: string;
  messageId: string;
  /** The JSON-encoded body. */
  payload: string;
  /** Deliveries so far, counted at claim time; a retryable failure gives its count back. */
  deliveryCount: number;
  /** Retryable failures so far, and when the first of them happened (epoch ms). */
  retries?: number;
  firstFailureAt?: number | null;
  state: MessageState;
  /** Epoch milliseconds before which the message is not handed out. */
  visibleAt: number;
  /** Token of the delivery holding the message, null when ready. */
  claim: string | null;
  /** Id of the bus instance holding the claim, null when ready. */
  owner: string | null;
  sentAt: string;
  /** The sender's headers (request id, tenant), absent when it sent none. */
  headers?: Record<string, string>;
  /** Set when dead-lettered: the queue it came from and the deliveries it had. */
  deadLetter?: { queue: string; deliveries: number; at: string };
}

/** Bus instances alive in this process; claims held by anyone else are orphans of a dead process. */
const liveBuses = new Set<string>();
/** Sends wake idle consumers of the same queue in this process without waiting for a poll. */
const wakeups = new EventEmitter().setMaxListeners(0);
/** Broadcast is process-wide, as if the process were the broker. */
const topics = new EventEmitter().setMaxListeners(0);

export const MESSAGES_SPEC: CollectionSpec = {
  name: MESSAGES_COLLECTION,
  autoIncrement: true,
  indexes: [
    // Claims scan a queue's ready messages in send order and stop at the first visible one.
    {
      name: 'queue_state_id',
      keys: [
        ['queue', 1],
        ['state', 1],
        ['_id', 1],
      ],
    },
    {
      name: 'state_owner',
      keys: [
        ['state', 1],
        ['owner', 1],
      ],
    },
  ],
};

export async function openEmbeddedBus(options: EmbeddedBusOptions): Promise<Bus> {
  const messages = await options.store.collection<MessageDoc>(MESSAGES_SPEC);
  const bus = new EmbeddedBus(messages, options);
  await bus.recover();
  return bus;
}

class EmbeddedBus implements Bus {
  readonly id = randomUUID();
  readonly maxDeliveries: number;
  readonly policy: RetryPolicy;
  readonly pollIntervalMs: number;
  readonly drainTimeoutMs: number;
  /** Set at shutdown: consumers hand back what they hold by then. */
  private drainDeadline = Infinity;
  readonly log: BusLogger;
  private readonly consumers = new Set<EmbeddedConsumer>();
  private readonly subscriptions = new Set<() => void>();
  private closed = false;

  constructor(
    readonly messages: Collection<MessageDoc>,
    private readonly options: EmbeddedBusOptions,
  ) {
    this.policy = resolveRetryPolicy(options);
    this.maxDeliveries = this.policy.maxDeliveries;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.log = defaultLogger(options.logger).child({ adapter: 'embedded' });
    liveBuses.add(this.id);
  }

  name(queue: string): string {
    return namespaced(this.options.namespace, queue);
  }

  /** Hands back messages claimed by bus instances that no longer exist (a crashed process). */
  async recover(): Promise<void> {
    const orphans = await this.messages.updateMany(
      { state: 'inflight', owner: { $nin: [...liveBuses] } },
      { $set: { state: 'ready', claim: null, owner: null, visibleAt: Date.now() } },
    );
    if (orphans.modified > 0) this.log.warn({ messages: orphans.modified }, 'redelivering messages left in flight by a previous process');
  }

  async send<T>(queue: string, body: T, options?: SendOptions): Promise<void> {
    this.assertOpen();
    assertName('queue', queue);
    const name = this.name(queue);
    await this.messages.insertOne({
      queue: name,
      messageId: options?.messageId ?? randomUUID(),
      payload: encodeBody(body),
      deliveryCount: 0,
      state: 'ready',
      visibleAt: Date.now(),
      claim: null,
      owner: null,
      sentAt: new Date().toISOString(),
      ...(options?.headers && { headers: options.headers }),
    });
    wakeups.emit(name);
  }

  async consume<T>(queue: string, handler: WorkHandler<T>, options?: ConsumeOptions): Promise<Subscription> {
    this.assertOpen();
    assertName('queue', queue);
    const consumer = new EmbeddedConsumer(
      this,
      this.name(queue),
      handler as WorkHandler,
      resolvePrefetch(options?.prefetch),
      options?.onDeadLetter,
    );
    this.consumers.add(consumer);
    consumer.start();
    return {
      close: async () => {
        this.consumers.delete(consumer);
        await consumer.close();
      },
    };
  }

  async publish<T>(topic: string, event: T): Promise<void> {
    this.assertOpen();
    assertName('topic', topic);
    topics.emit(this.name(topic), encodeBody(event));
  }

  async subscribe<T>(topic: string, handler: (event: T) => void | Promise<void>): Promise<Subscription> {
    this.assertOpen();
    assertName('topic', topic);
    const name = this.name(topic);
    const listener = (payload: string): void => {
      // Run after publish() returns, like a remote delivery, and never let a handler hurt the publisher.
      setImmediate(() =>
        inDeliveryContext(`event:${topic}`, () =>
          Promise.resolve()
            .then(() => handler(decodeBody<T>(payload)))
            .catch((err: unknown) => this.log.error({ err, topic }, 'event handler failed')),
        ),
      );
    };
    topics.on(name, listener);
    const off = (): void => {
      topics.off(name, listener);
    };
    this.subscriptions.add(off);
    return {
      close: async () => {
        this.subscriptions.delete(off);
        off();
      },
    };
  }

  /** Every message of the queue in the store; consumers of this process only (the store knows no others). */
  async queueStats(queue: string): Promise<QueueStats> {
    assertName('queue', queue);
    const name = this.name(queue);
    const [messages, oldest] = await Promise.all([
      this.messages.count({ queue: name }),
      this.messages.findOne({ queue: name }, { sort: [['_id', 1]] }),
    ]);
    const consumers = [...this.consumers].filter((c) => c.queue === name).length;
    // An empty queue has nothing waiting: age 0, so the gauge has a series before the first backlog.
    if (!oldest) return { messages, consumers, oldestAgeSeconds: 0 };
    const sent = Date.parse(oldest.sentAt);
    return { messages, consumers, ...(Number.isFinite(sent) && { oldestAgeSeconds: Math.max(0, Date.now() - sent) / 1000 }) };
  }

  async deadLetters<T>(queue: string, limit = 100): Promise<Array<{ messageId: string; body: T }>> {
    assertName('queue', queue);
    assertLimit(limit);
    // The store means what MongoDB means, where a limit of 0 is no limit at all.
    if (limit === 0) return [];
    const docs = await this.messages.find(
      { queue: deadQueueOf(this.name(queue)) },
      {
        sort: [
          ['visibleAt', 1],
          ['_id', 1],
        ],
        limit,
      },
    );
    return docs.map((doc) => ({ messageId: doc.messageId, body: decodeBody<T>(doc.payload) }));
  }

  async replayDeadLetters(queue: string, limit = 100): Promise<number> {
    this.assertOpen();
    assertName('queue', queue);
    assertLimit(limit);
    if (limit === 0) return 0;
    const name = this.name(queue);
    const dead = await this.messages.find(
      { queue: deadQueueOf(name) },
      {
        sort: [
          ['visibleAt', 1],
          ['_id', 1],
        ],
        limit,
      },
    );
    let moved = 0;
    for (const doc of dead) {
      // One atomic move per message, matched on its dead queue, so two replays cannot both move it.
      const back = await this.messages.updateOne(
        { _id: doc._id, queue: doc.queue },
        {
          $set: {
            queue: name,
            state: 'ready',
            deliveryCount: 0,
            retries: 0,
            firstFailureAt: null,
            visibleAt: Date.now(),
            claim: null,
            owner: null,
            headers: replayedHeaders(doc.headers),
          },
          $unset: { deadLetter: '' },
        },
      );
      moved += back.modified;
    }
    if (moved > 0) wakeups.emit(name);
    return moved;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.options.store.ping();
  }

  drainBy(deadline: number): void {
    this.drainDeadline = Math.min(this.drainDeadline, deadline);
  }

  /** How long a closing consumer may wait for its running handlers. */
  drainWindow(): number {
    return Math.max(0, Math.min(this.drainTimeoutMs, this.drainDeadline - Date.now()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.subscriptions) off();
    this.subscriptions.clear();
    await Promise.all([...this.consumers].map((consumer) => consumer.close()));
    this.consumers.clear();
    liveBuses.delete(this.id);
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('unavailable', 'The message bus is closed.');
  }
}

/** One consume() call: keeps up to `prefetch` claimed messages in its handler at once. */
class EmbeddedConsumer {
  private readonly timers = new Timers();
  private wakeTimer: NodeJS.Timeout | undefined;
  private readonly running = new Map<number, { claim: string; done: Promise<void> }>();
  /** Claims handed back at close; their late outcomes must not touch the store. */
  private readonly abandoned = new Set<string>();
  /** The claim loop in progress, if any; close() waits for it so no claim lands after close. */
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private closed = false;
  private closing: Promise<void> | null = null;
  private readonly wake = (): void => this.pump();

  constructor(
    private readonly bus: EmbeddedBus,
    readonly queue: string,
    private readonly handler: WorkHandler,
    private readonly prefetch: number,
    private readonly onDeadLetter: ConsumeOptions['onDeadLetter'],
  ) {}

  start(): void {
    wakeups.on(this.queue, this.wake);
    this.pump();
  }

  /** Claims while there is room; serialised so two wakeups never overshoot the prefetch. */
  pump(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    // A send wakes the loop from inside its request; the claims and their timers are the consumer's, not that request's.
    this.pumping = outsideTrace(() => this.fill())
      .catch((err: unknown) => {
        this.bus.log.error({ err, queue: this.queue }, 'claiming messages failed; retrying');
        this.schedule(this.bus.pollIntervalMs);
      })
      .finally(() => {
        this.pumping = null;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.pump();
        }
      });
  }

  private async fill(): Promise<void> {
    while (!this.closed && this.running.size < this.prefetch) {
      const doc = await this.claim();
      if (!doc) {
        await this.scheduleNextVisible();
        return;
      }
      if (this.closed) {
        await this.release(doc._id, doc.claim ?? '');
        return;
      }
      if (doc.deliveryCount > this.bus.maxDeliveries) {
        // Only a crash between claim and outcome gets here: the attempt that died was the last allowed one.
        await this.notifyDeadLetter(doc, { messageId: doc.messageId, deliveryCount: doc.deliveryCount - 1 }, unfinishedDelivery());
        await this.deadLetter(doc, doc.claim ?? '', doc.deliveryCount - 1);
        continue;
      }
      this.run(doc);
    }
  }

  private claim(): Promise<MessageDoc | null> {
    return this.bus.messages.findOneAndUpdate(
      { queue: this.queue, state: 'ready', visibleAt: { $lte: Date.now() } },
      { $set: { state: 'inflight', claim: randomUUID(), owner: this.bus.id }, $inc: { deliveryCount: 1 } },
      { sort: [['_id', 1]] },
    );
  }

  /** Sleeps until the earliest delayed redelivery, or the poll interval if that comes first. */
  private async scheduleNextVisible(): Promise<void> {
    const next = await this.bus.messages.findOne(
      { queue: this.queue, state: 'ready' },
      {
        sort: [
          ['visibleAt', 1],
          ['_id', 1],
        ],
      },
    );
    const wait = next ? Math.max(0, next.visibleAt - Date.now()) : this.bus.pollIntervalMs;
    this.schedule(Math.min(wait, this.bus.pollIntervalMs));
  }

  private schedule(ms: number): void {
    clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(this.wake, ms);
  }

  private run(doc: MessageDoc): void {
    const claim = doc.claim ?? '';
    const delivery = deliveryWithVerdict(
      { messageId: doc.messageId, deliveryCount: doc.deliveryCount },
      { deliveryCount: doc.deliveryCount, retries: doc.retries ?? 0, firstFailureAt: doc.firstFailureAt ?? null },
      this.bus.policy,
    );
    const done = (async () => {
      let failed = false;
      let failure: unknown;
      try {
        await inDeliveryContext(`delivery:${this.queue}:${doc.messageId}`, () =>
          this.handler(decodeBody(doc.payload), delivery, { headers: doc.headers ?? {}, sentAt: Date.parse(doc.sentAt) }),
        );
      } catch (err) {
        failed = true;
        failure = err;
      }
      if (this.abandoned.has(claim)) return;
      if (!failed) {
        await this.settle(() => this.bus.messages.deleteOne({ _id: doc._id, claim }));
        return;
      }
      const decision = decideOnFailure(
        failure,
        { deliveryCount: doc.deliveryCount, retries: doc.retries ?? 0, firstFailureAt: doc.firstFailureAt ?? null },
        this.bus.policy,
      );
      if (decision.action === 'dead-letter') {
        this.bus.log.warn(
          { err: failure, queue: this.queue, messageId: doc.messageId, deliveryCount: doc.deliveryCount },
          'handler failed for good; dead-lettering',
        );
        await this.notifyDeadLetter(doc, delivery, failure);
        await this.settle(() => this.deadLetter(doc, claim, doc.deliveryCount));
        return;
      }
      this.bus.log.warn(
        {
          err: failure,
          queue: this.queue,
          messageId: doc.messageId,
          deliveryCount: doc.deliveryCount,
          retries: decision.retries,
          retryInMs: decision.delayMs,
        },
        decision.counted ? 'handler failed; redelivering' : 'a dependency is unavailable; retrying later',
      );
      await this.settle(() =>
        this.bus.messages.updateOne(
          { _id: doc._id, claim },
          {
            $set: {
              state: 'ready',
              claim: null,
              owner: null,
              visibleAt: Date.now() + decision.delayMs,
              deliveryCount: decision.counted ? doc.deliveryCount : doc.deliveryCount - 1,
              retries: decision.retries,
              firstFailureAt: decision.firstFailureAt,
            },
          },
        ),
      );
    })().finally(() => {
      this.running.delete(doc._id);
      this.pump();
    });
    this.running.set(doc._id, { claim, done });
  }

  /** Retries an outcome write a few times; if the store keeps failing the message stays claimed until restart. */
  private async settle(write: () => Promise<unknown>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await write();
        return;
      } catch (err) {
        if (attempt >= 3) {
          this.bus.log.error(
            { err, queue: this.queue },
            'recording a delivery outcome failed; the message will be redelivered after restart',
          );
          return;
        }
        await this.timers.sleep(backoffMs(attempt, 50, 1_000));
      }
    }
  }

  private async notifyDeadLetter(doc: MessageDoc, delivery: Delivery, failure: unknown): Promise<void> {
    if (!this.onDeadLetter) return;
    try {
      const body: unknown = decodeBody(doc.payload);
      await this.onDeadLetter(body, delivery, failure);
    } catch (err) {
      this.bus.log.error({ err: errorMessage(err), queue: this.queue, messageId: doc.messageId }, 'the dead-letter hook failed');
    }
  }

  private deadLetter(doc: MessageDoc, claim: string, deliveries: number): Promise<unknown> {
    const now = Date.now();
    return this.bus.messages.updateOne(
      { _id: doc._id, claim },
      {
        $set: {
          queue: deadQueueOf(this.queue),
          state: 'ready',
          claim: null,
          owner: null,
          deliveryCount: 0,
          visibleAt: now,
          deadLetter: { queue: this.queue, deliveries, at: new Date(now).toISOString() },
        },
      },
    );
  }

  private release(id: number, claim: string): Promise<unknown> {
    return this.bus.messages.updateOne({ _id: id, claim }, { $set: { state: 'ready', claim: null, owner: null, visibleAt: Date.now() } });
  }

  /** Stops claiming, lets running handlers finish for a while, then hands the rest back. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      wakeups.off(this.queue, this.wake);
      clearTimeout(this.wakeTimer);
      await this.pumping;
      clearTimeout(this.wakeTimer);
      this.timers.cancelAll();
      const running = [...this.running.values()];
      const drained = await settleWithin(Promise.all(running.map((r) => r.done)), this.bus.drainWindow());
      if (drained) return;
      const stuck = [...this.running.entries()];
      this.bus.log.warn({ queue: this.queue, messages: stuck.length }, 'handlers still running at close; handing their messages back');
      for (const [id, { claim }] of stuck) {
        this.abandoned.add(claim);
        await this.release(id, claim).catch((err: unknown) =>
          this.bus.log.error(
            { err: errorMessage(err), queue: this.queue },
            'handing a message back failed; it is redelivered after restart',
          ),
        );
      }
    })();
    return this.closing;
  }
}
