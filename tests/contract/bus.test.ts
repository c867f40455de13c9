import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import amqp from 'amqplib';
import { isAppError } from '@supply/kit/errors';
import { openBus, type Bus, type Delivery, type OpenBusOptions } from '@supply/kit/bus/index';
import { openStore } from '@supply/kit/store/index';
import type { Store } from '@supply/kit/store/store';

/** Keeps this run's queues and exchanges apart from other runs on the same broker or store. */
const runNamespace = `test-bus-${process.pid}-${Date.now().toString(36)}`;
/** Small, so the poison-message test is quick; every bus in the run must agree on it. */
const MAX_DELIVERIES = 3;
/** Test buses give up on stuck handlers quickly at close. */
const tuning = { maxDeliveries: MAX_DELIVERIES, drainTimeoutMs: 300, redeliveryDelayMs: 20, sendTimeoutMs: 10_000 } satisfies Partial<OpenBusOptions>;

interface BusContractTarget {
  /** A new bus on the same backing state (store or broker) and namespace each call. */
  open(): Promise<Bus>;
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
      assert.deepEqual(seen.map((d) => d.deliveryCount), [1, 1, 1]);
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
      assert.deepEqual(counts, Array.from({ length: MAX_DELIVERIES }, (_, i) => i + 1));
      assert.deepEqual(dead, [{ messageId: 'poison-1', body: { bad: true } }]);
      assert.deepEqual(await bus.deadLetters(q), dead, 'reading dead letters does not consume them');
      assert.deepEqual(await bus.deadLetters(q, 0), []);
      await sleep(300);
      assert.equal(counts.length, MAX_DELIVERIES, 'no delivery after dead-lettering');
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
      assert.deepEqual(all, Array.from({ length: total }, (_, i) => i), 'no duplicates, none missing');
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
      await assert.rejects(bus.consume(queue('bad'), async () => undefined, { prefetch: 0 }), invalid);
    });
  });
}

/** Deletes what the AMQP suite declared, so test runs leave the broker as they found it. */
async function deleteAmqpTopology(url: string, namespace: string, queues: string[], topics: string[]): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    for (const name of queues) {
      for (const q of [`${namespace}.${name}`, `${namespace}.${name}.dead`]) {
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
    open: async () => openBus({ store: (await backing()).store, namespace: runNamespace, ...tuning }),
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
    open: () => openBus({ amqpUrl, namespace: runNamespace, ...tuning }),
    cleanup: (queues, topics) => deleteAmqpTopology(amqpUrl, runNamespace, queues, topics),
  });
} else {
  describe('Bus contract: amqp', () => {
    it.skip('skipped: AMQP_URL is not set');
  });
}
