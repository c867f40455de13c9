import { strict as assert } from 'node:assert';
import { WITNESS_MEMBERS, topic, type Topic } from '@supply/contracts';
import type { Bus } from './bus';
import type { Logger } from '../log';
import { Metrics } from '../metrics/metrics';
import { subscribeWitnessed, witnessedPublisher } from './witnessed';

const REVOKED: Topic<{ tenant: string; token_id: number }> = topic('tokens.revoked');
const CHANGED: Topic<{ tenant: string }> = topic('reference.changed');

/**
 * An in-memory fanout where each subscriber takes its copy after its own delay (its own
 * connection and event loop), and a subscriber can be cut off (a process that died).
 */
function fanout() {
  const subscribers = new Map<string, Set<{ handler: (e: unknown) => unknown; delayMs: () => number; cut: () => boolean }>>();
  let nextDelay = 0;
  let nextCut: () => boolean = () => false;
  const bus = {
    async publish(t: string, event: unknown) {
      for (const s of subscribers.get(t) ?? []) {
        if (s.cut()) continue;
        const copy = JSON.parse(JSON.stringify(event)) as unknown;
        setTimeout(() => void s.handler(copy), s.delayMs());
      }
    },
    async subscribe(t: string, handler: (e: unknown) => unknown) {
      const s = {
        handler,
        delayMs: (
          (d) => () =>
            d
        )(nextDelay),
        cut: nextCut,
      };
      if (!subscribers.has(t)) subscribers.set(t, new Set());
      subscribers.get(t)!.add(s);
      return { close: async () => void subscribers.get(t)!.delete(s) };
    },
  } as unknown as Bus;
  return {
    bus,
    /** Subscriptions made inside `run` take their copies `delayMs` late, and none once `cut()` says so. */
    async as<T>(delayMs: number, run: () => Promise<T>, cut: () => boolean = () => false): Promise<T> {
      nextDelay = delayMs;
      nextCut = cut;
      try {
        return await run();
      } finally {
        nextDelay = 0;
        nextCut = () => false;
      }
    },
  };
}

const settle = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms));

function recordingLogger() {
  const warnings: string[] = [];
  const logger = { warn: (_: unknown, msg: string) => void warnings.push(msg), error: () => {} } as unknown as Logger;
  return { warnings, logger };
}

describe('kit bus: witnessed broadcasts', () => {
  it('resolves only once every subscriber has applied the broadcast, the slowest included', async () => {
    const { bus, as } = fanout();
    const { logger, warnings } = recordingLogger();
    const publisher = await witnessedPublisher(bus, [REVOKED], logger);
    const fast: number[] = [];
    const slow: number[] = [];
    const subs = [
      await subscribeWitnessed(bus, REVOKED, (e) => void fast.push(e.token_id), logger),
      // Another gateway whose event loop is busy: its copy arrives 80 ms after the others.
      await as(80, () => subscribeWitnessed(bus, REVOKED, (e) => void slow.push(e.token_id), logger)),
    ];
    await settle();
    assert.equal(publisher.members(REVOKED), 2);
    const started = performance.now();
    await publisher.publish(REVOKED, { tenant: 'demo', token_id: 7 });
    assert.deepEqual([fast, slow], [[7], [7]], 'both applied it before publish resolved');
    assert.ok(performance.now() - started >= 75);
    assert.deepEqual(warnings, []);
    await Promise.all(subs.map((s) => s.close()));
    await publisher.close();
  });

  it('knows subscribers that were there before it started (roll call) and forgets those that leave', async () => {
    const { bus } = fanout();
    const { logger } = recordingLogger();
    const early = await subscribeWitnessed(bus, CHANGED, () => undefined, logger);
    const publisher = await witnessedPublisher(bus, [CHANGED, REVOKED], logger);
    await settle();
    assert.equal(publisher.members(CHANGED), 1);
    assert.equal(publisher.members(REVOKED), 0, 'a member counts only for the topics it follows');
    await early.close();
    await settle();
    assert.equal(publisher.members(CHANGED), 0);
    const started = performance.now();
    await publisher.publish(CHANGED, { tenant: 'demo' });
    assert.ok(performance.now() - started < 50, 'nobody to wait for');
    await publisher.close();
  });

  it('waits out the bound for a subscriber that died, warns, and does not wait for it again until it is heard from', async () => {
    const { bus, as } = fanout();
    const { logger, warnings } = recordingLogger();
    const publisher = await witnessedPublisher(bus, [REVOKED], logger, { waitMs: 60 });
    let dead = false;
    await as(
      0,
      () => subscribeWitnessed(bus, REVOKED, () => undefined, logger),
      () => dead,
    );
    await settle();
    dead = true;
    let started = performance.now();
    await publisher.publish(REVOKED, { tenant: 'demo', token_id: 1 });
    assert.ok(performance.now() - started >= 55);
    assert.ok(warnings.some((w) => w.includes('not acknowledged')));
    started = performance.now();
    await publisher.publish(REVOKED, { tenant: 'demo', token_id: 2 });
    assert.ok(performance.now() - started < 40, 'the dead member was dropped from the roster');
    await publisher.close();
  });

  it('brings a member dropped for a missed acknowledgement back on its next heartbeat', async () => {
    const { bus, as } = fanout();
    const { logger } = recordingLogger();
    const publisher = await witnessedPublisher(bus, [REVOKED], logger, { waitMs: 30, heartbeatMs: 40 });
    let silent = false;
    // Its copies stop arriving while `silent` (a stalled connection), so it acknowledges nothing.
    await as(
      0,
      () => subscribeWitnessed(bus, REVOKED, () => undefined, logger, { heartbeatMs: 40 }),
      () => silent,
    );
    await settle();
    assert.equal(publisher.members(REVOKED), 1);
    silent = true;
    await publisher.publish(REVOKED, { tenant: 'demo', token_id: 1 });
    assert.equal(publisher.members(REVOKED), 0);
    silent = false;
    await settle(60);
    assert.equal(publisher.members(REVOKED), 1, 'back after its next heartbeat');
    await publisher.close();
  });

  it('does not acknowledge a broadcast whose handler failed', async () => {
    const { bus } = fanout();
    const { logger, warnings } = recordingLogger();
    const publisher = await witnessedPublisher(bus, [CHANGED], logger, { waitMs: 50 });
    const sub = await subscribeWitnessed(
      bus,
      CHANGED,
      () => {
        throw new Error('cache broken');
      },
      logger,
    );
    await settle();
    await publisher.publish(CHANGED, { tenant: 'demo' });
    assert.ok(warnings.some((w) => w.includes('not acknowledged')));
    await sub.close();
    await publisher.close();
  });

  it('bounds the whole wait, the bus confirm included: a stalled broker does not hold the change back', async () => {
    const { logger, warnings } = recordingLogger();
    const stalled = { ...fanout().bus, publish: () => new Promise<void>(() => undefined) } as unknown as Bus;
    const publisher = await witnessedPublisher(stalled, [CHANGED], logger, { waitMs: 50 });
    const started = performance.now();
    await publisher.publish(CHANGED, { tenant: 'demo' });
    assert.ok(performance.now() - started < 500);
    assert.ok(warnings.some((w) => w.includes('not confirmed by the bus')));
    await publisher.close();
  });

  it('logs a broadcast the bus refused and answers at once', async () => {
    const errors: string[] = [];
    const logger = { warn: () => undefined, error: (_: unknown, msg: string) => void errors.push(msg) } as unknown as Logger;
    const refusing = { ...fanout().bus, publish: async () => Promise.reject(new Error('channel closed')) } as unknown as Bus;
    const publisher = await witnessedPublisher(refusing, [CHANGED], logger, { waitMs: 5_000 });
    const started = performance.now();
    await publisher.publish(CHANGED, { tenant: 'demo' });
    assert.ok(performance.now() - started < 500);
    assert.deepEqual(errors, ['broadcast not published']);
    await publisher.close();
  });

  it('counts each broadcast by how its wait ended and times the wait', async () => {
    const { bus } = fanout();
    const { logger } = recordingLogger();
    const metrics = new Metrics();
    const publisher = await witnessedPublisher(bus, [CHANGED], logger, { waitMs: 40, metrics });
    const sub = await subscribeWitnessed(bus, CHANGED, () => undefined, logger);
    await settle();
    await publisher.publish(CHANGED, { tenant: 'demo' });
    await sub.close();
    await publisher.publish(CHANGED, { tenant: 'demo' });
    const text = await metrics.text();
    assert.match(text, /supply_broadcasts_total\{topic="reference.changed",outcome="acknowledged"\} 2/);
    assert.match(text, /supply_broadcast_wait_seconds_count\{topic="reference.changed"\} 2/);
    await publisher.close();
  });

  it('passes a gap on to its owner and announces itself again, so a publisher that dropped it waits for it anew', async () => {
    const { bus } = fanout();
    const { logger } = recordingLogger();
    let gapOf: (() => void) | undefined;
    const gapping = {
      ...bus,
      subscribe: (t: string, handler: (e: unknown) => void, options?: { onGap?: () => void }) => {
        if (t === CHANGED) gapOf = options?.onGap;
        return bus.subscribe(t as Topic<unknown>, handler);
      },
    } as unknown as Bus;
    const announcements: string[] = [];
    await bus.subscribe(WITNESS_MEMBERS, (m) => void announcements.push(m.kind));
    let dropped = 0;
    await subscribeWitnessed(gapping, CHANGED, () => undefined, logger, { onGap: () => void dropped++ });
    await settle();
    assert.deepEqual(announcements, ['here']);
    gapOf!();
    await settle();
    assert.equal(dropped, 1);
    assert.deepEqual(announcements, ['here', 'here']);
  });
});
