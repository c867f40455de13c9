import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import amqp from 'amqplib';
import {
  AppError,
  currentContext,
  isAppError,
  Metrics,
  openBus,
  openStore,
  REPLAY_HEADER,
  runWithContext,
  type Bus,
  type Delivery,
  type OpenBusOptions,
  type RequestContext,
  type Store,
} from '@supply/kit';
import { missingBackend } from '../support/require';

/** Keeps this run's queues and exchanges apart from other runs on the same broker or store. */
const runNamespace = `test-bus-${process.pid}-${Date.now().toString(36)}`;
/** Small, so the poison-message test is quick; every bus in the run must agree on it. */
const MAX_DELIVERIES = 3;
/** Test buses give up on stuck handlers quickly at close. */
const tuning = {
  maxDeliveries: MAX_DELIVERIES,
  drainTimeoutMs: 300,
  redeliveryDelayMs: 20,
  sendTimeoutMs: 10_000,
} satisfies Partial<OpenBusOptions>;

interface BusContractTarget {
  /** A new bus on the same backing state (store or broker) and namespace each call. */
  open(overrides?: Partial<OpenBusOptions>): Promise<Bus>;
  /** Called once after the suite with every queue and topic name it used. */
  cleanup?(queues: string[], topics: string[]): Promise<void>;
}

async function until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** The behaviour every Bus adapter must show. */
function busContract(name: string, target: BusContractTarget): void {
  describe(`Bus contract: ${name}`, function () {
    this.timeout(20_000);
    const queues: string[] = [];
    const topics: string[] = [];
    let sequence = 0;
    const queue = (label: string): string => {
      const q = `${label}-${++sequence}`;
      queues.push(q);
      return q;
    };
    const topic = (label: string): string => {
      const t = `${label}-${++sequence}`;
      topics.push(t);
      return t;
    };
    let bus: Bus;
    const extra: Bus[] = [];

    beforeEach(async () => {
      bus = await target.open();
    });
    afterEach(async () => {
      await Promise.all([bus, ...extra.splice(0)].map((b) => b.close()));
    });
    after(async () => {
      await target.cleanup?.(queues, topics);
    });

    it('delivers in send order with payloads round-tripped as JSON', async () => {
      const q = queue('order');
      const bodies: unknown[] = [
        { id: 1, lines: [{ sku: 'A-1', qty: 2.5 }], note: 'ünïcødé ✓' },
        'plain string',
        42,
        null,
        [1, [2, [3]]],
        true,
        { nested: { deep: { deeper: ['x'] } }, empty: {} },
      ];
      for (const body of bodies) await bus.send(q, body);
      const received: unknown[] = [];
      await bus.consume(q, async (body) => {
        received.push(body);
      });
      await until(() => received.length === bodies.length, 'all messages');
      assert.deepEqual(received, bodies);
    });

    it("runs the handler with the sender's request id, and its tenant for log lines only (both travel in headers); without them, in a context of its own", async () => {
      const q = queue('context');
      await runWithContext({ requestId: 'req-ctx-1', tenant: 'demo' }, () => bus.send(q, 'with'));
      await bus.send(q, 'without');
      const seen: Array<{ body: unknown; requestId?: string; tenant?: string; originTenant?: string }> = [];
      await bus.consume(q, async (body) => {
        seen.push({
          body,
          requestId: currentContext()?.requestId,
          tenant: currentContext()?.tenant,
          originTenant: currentContext()?.originTenant,
        });
      });
      await until(() => seen.length === 2, 'two deliveries');
      assert.deepEqual(seen[0], { body: 'with', requestId: 'req-ctx-1', tenant: undefined, originTenant: 'demo' });
      assert.equal(seen[1]!.tenant, undefined);
      assert.equal(seen[1]!.originTenant, undefined);
      assert.notEqual(seen[1]!.requestId, 'req-ctx-1');
    });

    it('tells how many messages a queue holds and how many consumers it has', async () => {
      const q = queue('stats');
      await bus.send(q, 1);
      await bus.send(q, 2);
      const before = await bus.queueStats!(q);
      assert.equal(before.messages, 2);
      assert.equal(before.consumers, 0);
      // Only the embedded bus can tell the oldest message's age (RabbitMQ does not).
      if (name === 'embedded') assert.ok(before.oldestAgeSeconds! >= 0 && before.oldestAgeSeconds! < 60, String(before.oldestAgeSeconds));
      const got: unknown[] = [];
      await bus.consume(q, async (body) => void got.push(body));
      await until(() => got.length === 2, 'both messages');
      let after = await bus.queueStats!(q);
      for (let i = 0; i < 50 && after.messages > 0; i++) {
        await sleep(20);
        after = await bus.queueStats!(q);
      }
      assert.deepEqual({ messages: after.messages, consumers: after.consumers }, { messages: 0, consumers: 1 });
      // Nothing waits in an empty queue, where the bus can tell.
      if (name === 'embedded') assert.equal(after.oldestAgeSeconds, 0);
    });

    it('keeps the caller messageId, assigns distinct ones otherwise', async () => {
      const q = queue('ids');
      await bus.send(q, 'a', { messageId: 'order-17' });
      await bus.send(q, 'b');
      await bus.send(q, 'c');
      const seen: Delivery[] = [];
      await bus.consume(q, async (_body, delivery) => {
        seen.push(delivery);
      });
      await until(() => seen.length === 3, 'three deliveries');
      assert.equal(seen[0]!.messageId, 'order-17');
      assert.ok(seen[1]!.messageId && seen[2]!.messageId && seen[1]!.messageId !== seen[2]!.messageId);
      assert.deepEqual(
        seen.map((d) => d.deliveryCount),
        [1, 1, 1],
      );
    });

    it('acks only after the handler: a throw redelivers with deliveryCount 2 and the same messageId', async () => {
      const q = queue('retry');
      await bus.send(q, { job: 'x' }, { messageId: 'retry-me' });
      const seen: Array<{ body: unknown } & Delivery> = [];
      await bus.consume(q, async (body, delivery) => {
        seen.push({ body, ...delivery });
        if (delivery.deliveryCount === 1) throw new Error('transient failure');
      });
      await until(() => seen.length >= 2, 'the redelivery');
      await sleep(200);
      assert.deepEqual(seen, [
        { body: { job: 'x' }, messageId: 'retry-me', deliveryCount: 1 },
        { body: { job: 'x' }, messageId: 'retry-me', deliveryCount: 2 },
      ]);
      assert.deepEqual(await bus.deadLetters(q), []);
    });

    it('dead-letters a poison message after maxDeliveries; deadLetters shows it without consuming it', async () => {
      const q = queue('poison');
      await bus.send(q, { bad: true }, { messageId: 'poison-1' });
      await bus.send(q, { bad: false }, { messageId: 'fine-1' });
      const counts: number[] = [];
      const fine: string[] = [];
      await bus.consume(q, async (body, delivery) => {
        if ((body as { bad: boolean }).bad) {
          counts.push(delivery.deliveryCount);
          throw new Error('cannot process');
        }
        fine.push(delivery.messageId);
      });
      await until(() => counts.length === MAX_DELIVERIES && fine.length === 1, 'every delivery attempt');
      // Dead-lettering happens after the last nack, so give the broker a moment.
      let dead: Array<{ messageId: string; body: unknown }> = [];
      for (let i = 0; i < 50 && dead.length === 0; i++) {
        dead = await bus.deadLetters(q);
        if (dead.length === 0) await sleep(50);
      }
      assert.deepEqual(
        counts,
        Array.from({ length: MAX_DELIVERIES }, (_, i) => i + 1),
      );
      assert.deepEqual(dead, [{ messageId: 'poison-1', body: { bad: true } }]);
      assert.deepEqual(await bus.deadLetters(q), dead, 'reading dead letters does not consume them');
      assert.deepEqual(await bus.deadLetters(q, 0), []);
      await sleep(300);
      assert.equal(counts.length, MAX_DELIVERIES, 'no delivery after dead-lettering');
    });

    it('replays dead letters onto their queue as fresh messages: same id, body and headers, deliveries counted anew, x-replay counting replays', async () => {
      const q = queue('replay');
      let poisoned = true;
      const seen: Array<{ count: number; replay: string | undefined; request: string | undefined }> = [];
      await bus.consume(q, async (_body, delivery, envelope) => {
        seen.push({ count: delivery.deliveryCount, replay: envelope?.headers[REPLAY_HEADER], request: envelope?.headers['x-request-id'] });
        if (poisoned) throw new Error('cannot process yet');
      });
      await bus.send(q, { n: 1 }, { messageId: 'replayed-1', headers: { 'x-request-id': 'req-replay' } });
      let dead: Array<{ messageId: string; body: unknown }> = [];
      for (let i = 0; i < 100 && dead.length === 0; i++) {
        dead = await bus.deadLetters(q);
        if (dead.length === 0) await sleep(50);
      }
      assert.deepEqual(dead, [{ messageId: 'replayed-1', body: { n: 1 } }]);
      assert.equal(await bus.replayDeadLetters(q, 0), 0, 'a limit of 0 moves nothing');

      // Still poisoned: the replay gets every delivery again, and rests in the dead-letter queue once more.
      assert.equal(await bus.replayDeadLetters(q), 1);
      await until(() => seen.length === 2 * MAX_DELIVERIES, 'the first replay used its deliveries');
      dead = [];
      for (let i = 0; i < 100 && dead.length === 0; i++) {
        dead = await bus.deadLetters(q);
        if (dead.length === 0) await sleep(50);
      }
      assert.equal(dead.length, 1);

      poisoned = false;
      assert.equal(await bus.replayDeadLetters(q, 10), 1);
      await until(() => seen.length === 2 * MAX_DELIVERIES + 1, 'the second replay was handled');
      assert.deepEqual(
        seen.map((s) => [s.count, s.replay ?? '0', s.request]),
        [
          ...Array.from({ length: MAX_DELIVERIES }, (_, i) => [i + 1, '0', 'req-replay']),
          ...Array.from({ length: MAX_DELIVERIES }, (_, i) => [i + 1, '1', 'req-replay']),
          [1, '2', 'req-replay'],
        ],
      );
      await sleep(200);
      assert.deepEqual(await bus.deadLetters(q), [], 'nothing left dead');
      assert.equal(await bus.replayDeadLetters(q), 0);
    });

    it('retries a retryable failure past maxDeliveries with growing jittered delays, counting no delivery', async () => {
      const q = queue('outage');
      const slow = await target.open({ redeliveryDelayMs: 100, redeliveryMaxDelayMs: 2_000 });
      extra.push(slow);
      await slow.send(q, { chunk: 1 }, { messageId: 'outage-1' });
      const failures = MAX_DELIVERIES + 3;
      const seen: Array<Delivery & { at: number }> = [];
      await slow.consume(q, async (_body, delivery) => {
        seen.push({ ...delivery, at: Date.now() });
        if (seen.length <= failures) throw new AppError('unavailable', 'The store is unavailable.');
      });
      await until(() => seen.length === failures + 1, 'the delivery after the outage', 15_000);
      assert.deepEqual(new Set(seen.map((d) => d.deliveryCount)), new Set([1]), 'retryable failures burn no delivery');
      assert.deepEqual(new Set(seen.map((d) => d.messageId)), new Set(['outage-1']));
      // Full jitter up to 100, 200, ... 2,000 ms: the sum is far above 300 ms but for a negligible chance.
      assert.ok(seen[seen.length - 1]!.at - seen[0]!.at > 300, 'retries back off rather than spin');
      await sleep(200);
      assert.equal(seen.length, failures + 1, 'acked once it succeeded');
      assert.deepEqual(await slow.deadLetters(q), []);
    });

    it("keeps the sender's request id and tenant across retries of both kinds, and counts each failure by the adapter's verdict", async () => {
      const q = queue('retry-context');
      const metrics = new Metrics({ defaultMetrics: false });
      const counted = await target.open({ metrics });
      extra.push(counted);
      await runWithContext({ requestId: 'req-retry-1', tenant: 'demo' }, () => counted.send(q, 'body', { messageId: 'retry-ctx-1' }));
      // Two permanent failures use up all but the last delivery; a retryable one then must not dead-letter it.
      const failures = [new Error('bad'), new Error('bad'), new AppError('unavailable', 'The store is unavailable.')];
      const seen: Array<{ requestId?: string; originTenant?: string; deliveryCount: number }> = [];
      await counted.consume(q, async (body, delivery) => {
        if (body === 'poison') throw new Error('cannot process');
        seen.push({
          requestId: currentContext()?.requestId,
          originTenant: currentContext()?.originTenant,
          deliveryCount: delivery.deliveryCount,
        });
        const failure = failures[seen.length - 1];
        if (failure) throw failure;
      });
      await until(() => seen.length === 4, 'the delivery after three failures', 15_000);
      assert.deepEqual(
        seen.map((s) => s.deliveryCount),
        [1, 2, 3, 3],
      );
      for (const s of seen)
        assert.deepEqual({ requestId: s.requestId, originTenant: s.originTenant }, { requestId: 'req-retry-1', originTenant: 'demo' });
      const counts = async () => {
        const outcomes = (await metrics.busMessages.get()).values.filter((v) => v.labels.queue === q);
        const count = (outcome: string) => outcomes.find((v) => v.labels.outcome === outcome)?.value ?? 0;
        return { acked: count('acknowledged'), retried: count('retried'), dead: count('dead_lettered'), delivered: count('delivered') };
      };
      const settled = async (what: string, done: (c: Awaited<ReturnType<typeof counts>>) => boolean) => {
        for (let i = 0; i < 300; i++) {
          const c = await counts();
          if (done(c)) return c;
          await sleep(50);
        }
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await counts())}`);
      };
      assert.deepEqual(await settled('the ack', (c) => c.acked === 1), { acked: 1, retried: 3, dead: 0, delivered: 4 });
      // A poison message: retried until its last allowed delivery, then one dead letter.
      await counted.send(q, 'poison', { messageId: 'retry-ctx-2' });
      assert.deepEqual(await settled('the dead letter', (c) => c.dead === 1), {
        acked: 1,
        retried: 3 + MAX_DELIVERIES - 1,
        dead: 1,
        delivered: 4 + MAX_DELIVERIES,
      });
    });

    it('dead-letters a retryable failure once the outage window has passed, telling onDeadLetter why', async () => {
      const q = queue('window');
      const brief = await target.open({ outageWindowMs: 400, redeliveryDelayMs: 20, redeliveryMaxDelayMs: 100 });
      extra.push(brief);
      await brief.send(q, { chunk: 2 }, { messageId: 'window-1' });
      let attempts = 0;
      const hooked: Array<{ body: unknown; delivery: Delivery; error: unknown }> = [];
      const started = Date.now();
      await brief.consume(
        q,
        async () => {
          attempts++;
          throw new AppError('deadline_exceeded', 'The peer did not answer in time.');
        },
        { onDeadLetter: async (body, delivery, error) => void hooked.push({ body, delivery, error }) },
      );
      let dead: Array<{ messageId: string; body: unknown }> = [];
      for (let i = 0; i < 100 && dead.length === 0; i++) {
        dead = await brief.deadLetters(q);
        if (dead.length === 0) await sleep(50);
      }
      assert.deepEqual(dead, [{ messageId: 'window-1', body: { chunk: 2 } }]);
      assert.ok(Date.now() - started >= 400, 'not before the window ended');
      assert.ok(attempts > MAX_DELIVERIES, `retried through the window (${attempts} attempts)`);
      assert.equal(hooked.length, 1);
      assert.deepEqual(hooked[0]!.body, { chunk: 2 });
      assert.equal(hooked[0]!.delivery.messageId, 'window-1');
      assert.ok(isAppError(hooked[0]!.error) && hooked[0]!.error.code === 'deadline_exceeded');
    });

    it('calls onDeadLetter once, on the last allowed delivery of a poison message', async () => {
      const q = queue('poison-hook');
      await bus.send(q, { bad: 1 }, { messageId: 'poison-hook-1' });
      const hooked: Delivery[] = [];
      const verdicts: Array<[boolean | undefined, boolean | undefined]> = [];
      let attempts = 0;
      await bus.consume(
        q,
        async (_body, delivery) => {
          attempts++;
          // What a throw would do now: a permanent failure dead-letters on the last delivery, a retryable one not yet.
          verdicts.push([delivery.willDeadLetter?.(new Error('x')), delivery.willDeadLetter?.(new AppError('unavailable', 'x'))]);
          throw new Error('cannot parse');
        },
        { onDeadLetter: async (_body, delivery) => void hooked.push(delivery) },
      );
      await until(() => hooked.length === 1, 'the dead-letter hook');
      await sleep(200);
      assert.equal(attempts, MAX_DELIVERIES);
      assert.deepEqual(hooked, [{ messageId: 'poison-hook-1', deliveryCount: MAX_DELIVERIES }]);
      assert.deepEqual(
        verdicts,
        Array.from({ length: MAX_DELIVERIES }, (_, i) => [i === MAX_DELIVERIES - 1, false]),
      );
    });

    it('never runs more handlers at once than prefetch, and does use it', async () => {
      const q = queue('prefetch');
      for (let i = 0; i < 12; i++) await bus.send(q, i);
      let active = 0;
      let peak = 0;
      let done = 0;
      await bus.consume(
        q,
        async () => {
          active++;
          peak = Math.max(peak, active);
          await sleep(40);
          active--;
          done++;
        },
        { prefetch: 3 },
      );
      await until(() => done === 12, 'all handlers');
      assert.equal(peak, 3);
    });

    it('shares a queue between two consumers, each message to exactly one', async () => {
      const q = queue('shared');
      const total = 30;
      for (let i = 0; i < total; i++) await bus.send(q, i);
      const byConsumer: number[][] = [[], []];
      const handler = (slot: 0 | 1) => async (body: number) => {
        await sleep(5);
        byConsumer[slot]!.push(body);
      };
      await bus.consume<number>(q, handler(0));
      await bus.consume<number>(q, handler(1));
      await until(() => byConsumer[0]!.length + byConsumer[1]!.length >= total, 'all messages');
      await sleep(200);
      const all = [...byConsumer[0]!, ...byConsumer[1]!].sort((a, b) => a - b);
      assert.deepEqual(
        all,
        Array.from({ length: total }, (_, i) => i),
        'no duplicates, none missing',
      );
      assert.ok(byConsumer[0]!.length > 0 && byConsumer[1]!.length > 0, 'both consumers got work');
    });

    it('fans a published event out to every subscriber; a failing handler harms nobody', async () => {
      const t = topic('events');
      const first: unknown[] = [];
      const second: unknown[] = [];
      const sub1 = await bus.subscribe(t, (event) => {
        first.push(event);
      });
      await bus.subscribe(t, async (event) => {
        second.push(event);
        throw new Error('subscriber bug');
      });
      await bus.publish(t, { n: 1 });
      await bus.publish(t, { n: 2 });
      await until(() => first.length === 2 && second.length === 2, 'both subscribers');
      assert.deepEqual(first, [{ n: 1 }, { n: 2 }]);
      assert.deepEqual(second, [{ n: 1 }, { n: 2 }]);
      await sub1.close();
      await bus.publish(t, { n: 3 });
      await until(() => second.length === 3, 'the remaining subscriber');
      await sleep(100);
      assert.equal(first.length, 2, 'a closed subscription gets nothing');
    });

    it('reaches subscribers of another bus instance on the same namespace', async () => {
      const t = topic('cross');
      const other = await target.open();
      extra.push(other);
      const got: unknown[] = [];
      await other.subscribe(t, (event) => {
        got.push(event);
      });
      await bus.publish(t, 'hello');
      await until(() => got.length === 1, 'the other instance');
      assert.deepEqual(got, ['hello']);
    });

    it('is durable: unacked messages survive a close and reach the next bus', async () => {
      const q = queue('durable');
      for (let i = 0; i < 5; i++) await bus.send(q, i, { messageId: `d-${i}` });
      const firstRun: number[] = [];
      await bus.consume<number>(q, async (body) => {
        firstRun.push(body);
        // Message 2 is in flight when the bus closes; its handler never finishes.
        if (body === 2) await new Promise(() => undefined);
      });
      await until(() => firstRun.length === 3, 'the first run to stall');
      await bus.close();

      bus = await target.open();
      const secondRun: Array<{ body: number } & Delivery> = [];
      await bus.consume<number>(q, async (body, delivery) => {
        secondRun.push({ body, ...delivery });
      });
      await until(() => secondRun.length === 3, 'the remaining messages');
      assert.deepEqual(firstRun, [0, 1, 2]);
      assert.deepEqual(secondRun, [
        { body: 2, messageId: 'd-2', deliveryCount: 2 },
        { body: 3, messageId: 'd-3', deliveryCount: 1 },
        { body: 4, messageId: 'd-4', deliveryCount: 1 },
      ]);
    });

    it("runs every handler in a context of its own, never the sender's (its principal would act for the delivery); a work-queue delivery keeps only the sender's request id", async () => {
      const q = queue('context');
      const t = topic('context');
      const sender: RequestContext = {
        requestId: 'req-a',
        tenant: 'demo',
        principal: { tenant: 'demo', tokenId: 1, userId: 1, scopes: ['*'], isAdmin: true },
      };
      const seen: Array<RequestContext | undefined> = [];
      await bus.consume(q, async () => void seen.push(currentContext()));
      await bus.subscribe(t, async () => void seen.push(currentContext()));
      await runWithContext(sender, async () => {
        await bus.send(q, { n: 1 });
        await bus.publish(t, { n: 2 });
      });
      await until(() => seen.length === 2, 'both deliveries');
      for (const ctx of seen) {
        assert.equal(ctx?.principal, undefined);
        assert.equal(ctx?.tenant, undefined);
      }
      // The work queue's consumer logs under the request that sent the message; the event subscriber does not.
      assert.deepEqual(seen.map((ctx) => ctx?.requestId === 'req-a').sort(), [false, true]);
    });

    it('stops delivering to a closed consumer and refuses work once closed', async () => {
      const q = queue('closing');
      const got: unknown[] = [];
      const sub = await bus.consume(q, async (body) => {
        got.push(body);
      });
      await bus.send(q, 1);
      await until(() => got.length === 1, 'the first message');
      await sub.close();
      await bus.send(q, 2);
      await sleep(200);
      assert.deepEqual(got, [1]);
      await bus.ping();
      await bus.close();
      await assert.rejects(bus.send(q, 3), (e: unknown) => isAppError(e) && e.code === 'unavailable');
    });

    it('rejects invalid names and prefetch as invalid_argument', async () => {
      const invalid = (e: unknown) => isAppError(e) && e.code === 'invalid_argument';
      await assert.rejects(bus.send('has space', 1), invalid);
      await assert.rejects(bus.publish('', 1), invalid);
      await assert.rejects(
        bus.consume(queue('bad'), async () => undefined, { prefetch: 0 }),
        invalid,
      );
    });
  });
}

/** Deletes what the AMQP suite declared, so test runs leave the broker as they found it. */
async function deleteAmqpTopology(url: string, namespace: string, queues: string[], topics: string[]): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    for (const name of queues) {
      for (const q of [`${namespace}.${name}`, `${namespace}.${name}.dead`, `${namespace}.${name}.retry`]) {
        const channel = await connection.createChannel();
        await channel.deleteQueue(q).catch(() => undefined);
        await channel.close().catch(() => undefined);
      }
    }
    const channel = await connection.createChannel();
    for (const t of topics) await channel.deleteExchange(`${namespace}.topic.${t}`).catch(() => undefined);
    await channel.deleteExchange(`${namespace}.dead-letter`).catch(() => undefined);
    await channel.close().catch(() => undefined);
  } finally {
    await connection.close();
  }
}

/** The embedded bus on a real embedded store in a scratch directory, shared by every bus the suite opens. */
function embeddedTarget(): BusContractTarget {
  let opened: Promise<{ store: Store; dataDir: string }> | null = null;
  const backing = () =>
    (opened ??= (async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'bus-contract-'));
      return { store: await openStore({ database: 'bus', dataDir }), dataDir };
    })());
  return {
    open: async (overrides) => openBus({ store: (await backing()).store, namespace: runNamespace, ...tuning, ...overrides }),
    cleanup: async () => {
      if (!opened) return;
      const { store, dataDir } = await opened;
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

busContract('embedded', embeddedTarget());

const amqpUrl = process.env.AMQP_URL;
if (amqpUrl) {
  busContract('amqp', {
    open: (overrides) => openBus({ amqpUrl, namespace: runNamespace, ...tuning, ...overrides }),
    cleanup: (queues, topics) => deleteAmqpTopology(amqpUrl, runNamespace, queues, topics),
  });
} else {
  describe('Bus contract: amqp', () => missingBackend('AMQP', 'AMQP_URL is not set'));
}
