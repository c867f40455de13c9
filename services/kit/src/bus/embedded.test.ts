import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../store/index.js';
import type { Collection, Store } from '../store/store.js';
import type { Bus, Delivery } from './bus.js';
import { MESSAGES_SPEC, openEmbeddedBus, type EmbeddedBusOptions, type MessageDoc } from './embedded.js';

async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('embedded bus (on the embedded store)', () => {
  let dataDir: string;
  let store: Store;
  let messages: Collection<MessageDoc>;
  let bus: Bus;
  const others: Bus[] = [];
  const open = async (options: Partial<EmbeddedBusOptions> = {}): Promise<Bus> => {
    const opened = await openEmbeddedBus({
      store,
      namespace: 'unit',
      maxDeliveries: 3,
      redeliveryDelayMs: 10,
      pollIntervalMs: 50,
      drainTimeoutMs: 200,
      ...options,
    });
    others.push(opened);
    return opened;
  };
  const stored = (): Promise<MessageDoc[]> => messages.find({}, { sort: [['_id', 1]] });
  /** Makes the only stored message look claimed by a process that has since died. */
  const orphan = async (deliveryCount: number): Promise<void> => {
    await messages.updateOne({}, { $set: { state: 'inflight', claim: 'gone', owner: 'crashed-process', deliveryCount } });
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'bus-unit-'));
    store = await openStore({ database: 'bus', dataDir });
    messages = await store.collection<MessageDoc>(MESSAGES_SPEC);
    bus = await open();
  });
  afterEach(async () => {
    await Promise.all(others.splice(0).map((b) => b.close()));
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('stores the message before send resolves', async () => {
    await bus.send('jobs', { n: 1 }, { messageId: 'm-1' });
    const [doc] = await stored();
    assert.equal(doc?.queue, 'unit.jobs');
    assert.equal(doc?.messageId, 'm-1');
    assert.equal(doc?.state, 'ready');
    assert.equal(doc?.deliveryCount, 0);
    assert.deepEqual(JSON.parse(doc!.payload), { n: 1 });
  });

  it('acks by deleting after the handler resolves, not before', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    await bus.send('jobs', 'x');
    await bus.consume('jobs', async () => {
      started = true;
      await gate;
    });
    await until(() => started);
    assert.equal((await stored())[0]?.state, 'inflight');
    release();
    await until(async () => (await stored()).length === 0);
  });

  it('redelivers after a jittered backoff within its growing cap and dead-letters after maxDeliveries', async () => {
    const seen: Delivery[] = [];
    await bus.send('jobs', 'poison', { messageId: 'p' });
    await bus.consume('jobs', async (_body, delivery) => {
      seen.push(delivery);
      throw new Error('boom');
    });
    await until(async () => (await stored()).some((m) => m.queue === 'unit.jobs.dead'));
    assert.deepEqual(
      seen.map((d) => d.deliveryCount),
      [1, 2, 3],
    );
    assert.ok(seen.every((d) => d.messageId === 'p'));
    // Full jitter: each wait is drawn in [0, 10 ms x 2^(n-1)] (the draw is tested in failures.test.ts).
    assert.deepEqual(await bus.deadLetters('jobs'), [{ messageId: 'p', body: 'poison' }]);
    assert.deepEqual((await stored())[0]?.deadLetter?.deliveries, 3);
  });

  it('a new bus redelivers what a dead process left in flight, counting that delivery', async () => {
    await bus.send('jobs', 'a', { messageId: 'a' });
    await orphan(1);
    const next = await open();
    const got: Delivery[] = [];
    await next.consume('jobs', async (_body, delivery) => {
      got.push(delivery);
    });
    await until(async () => got.length === 1 && (await stored()).length === 0);
    assert.deepEqual(got, [{ messageId: 'a', deliveryCount: 2 }]);
  });

  it('dead-letters an orphan whose crashed delivery was the last allowed one', async () => {
    await bus.send('jobs', 'a', { messageId: 'a' });
    await orphan(3);
    const next = await open();
    let calls = 0;
    await next.consume('jobs', async () => {
      calls++;
    });
    await until(async () => (await stored())[0]?.queue === 'unit.jobs.dead');
    assert.equal(calls, 0);
    assert.deepEqual(await next.deadLetters('jobs'), [{ messageId: 'a', body: 'a' }]);
  });

  it('does not take over messages held by another live bus on the same store', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    await bus.send('jobs', 'a');
    await bus.consume('jobs', async () => {
      calls++;
      await gate;
    });
    await until(() => calls === 1);
    await open();
    assert.equal((await stored())[0]?.state, 'inflight');
    release();
  });

  it('wakes an idle consumer on send without waiting for the poll', async () => {
    const idle = await open({ pollIntervalMs: 60_000 });
    const got: unknown[] = [];
    await idle.consume('wake', async (body) => {
      got.push(body);
    });
    await sleep(50);
    const sent = Date.now();
    await idle.send('wake', 1);
    await until(() => got.length === 1, 1_000);
    assert.ok(Date.now() - sent < 500);
  });

  it('close hands back messages whose handlers outlive the drain timeout', async () => {
    await bus.send('jobs', 'stuck');
    let started = false;
    await bus.consume('jobs', async () => {
      started = true;
      await new Promise(() => undefined);
    });
    await until(() => started);
    await bus.close();
    const [doc] = await stored();
    assert.equal(doc?.state, 'ready');
    assert.equal(doc?.claim, null);
    assert.equal(doc?.deliveryCount, 1);
  });

  it('rejects bad names and options as invalid_argument', async () => {
    await assert.rejects(bus.send('bad name', 1), { code: 'invalid_argument' });
    await assert.rejects(
      bus.consume('jobs', async () => undefined, { prefetch: 0 }),
      { code: 'invalid_argument' },
    );
    await assert.rejects(bus.deadLetters('jobs', -1), { code: 'invalid_argument' });
    await assert.rejects(open({ maxDeliveries: 0 }), { code: 'invalid_argument' });
  });

  it('refuses work after close', async () => {
    await bus.close();
    await assert.rejects(bus.send('jobs', 1), { code: 'unavailable' });
  });
});
