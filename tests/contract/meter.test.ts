import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAppError, openMeter, type Meter } from '@supply/kit';
import { ScratchRedis } from '../support/scratch-redis';
import { skipBecause } from '../support/require';

/** Keeps this run's keys apart from other runs sharing the same Redis. */
const runNamespace = `test:meter:${process.pid}:${Date.now().toString(36)}`;

export interface MeterContractOptions {
  /** Whether two meters opened by `open` see the same windows and balances (true for Redis). */
  sharedAcrossInstances: boolean;
}

const isUnavailable = (e: unknown) => isAppError(e) && e.code === 'unavailable';

function count<T>(items: T[], predicate: (item: T) => boolean): number {
  return items.filter(predicate).length;
}

/** The behaviour every Meter adapter must show; `open` returns a fresh meter on the run's namespace. */
export function meterContract(name: string, open: () => Promise<Meter>, options: MeterContractOptions): void {
  describe(`Meter contract: ${name}`, () => {
    let meter: Meter;
    let sequence = 0;
    const key = (label: string) => `${label}:${++sequence}`;

    before(async () => {
      meter = await open();
    });
    after(() => meter.close());

    it('lets exactly `limit` requests through a window, then refuses with remaining 0 and the time left', async () => {
      const rate = { key: key('rl'), limit: 3, windowSeconds: 60 };
      const passed = [await meter.check(rate), await meter.check(rate), await meter.check(rate)];
      assert.deepEqual(
        passed.map((d) => [d.allowed, d.rate.remaining]),
        [
          [true, 2],
          [true, 1],
          [true, 0],
        ],
      );
      assert.equal(passed[0]!.rate.resetSeconds, 60);
      for (let i = 0; i < 2; i++) {
        const refused = await meter.check(rate);
        assert.equal(refused.allowed, false);
        assert.equal(refused.refusedBy, 'rate');
        assert.equal(refused.rate.limit, 3);
        assert.equal(refused.rate.remaining, 0);
        assert.ok(refused.rate.resetSeconds >= 59 && refused.rate.resetSeconds <= 60, `resetSeconds ${refused.rate.resetSeconds}`);
        assert.equal(refused.credits, undefined);
      }
    });

    it('opens a new window once the old one has ended', async () => {
      const rate = { key: key('rl'), limit: 2, windowSeconds: 1 };
      const started = Date.now();
      assert.equal((await meter.check(rate)).rate.resetSeconds, 1);
      await meter.check(rate);
      const refused = await meter.check(rate);
      assert.equal(refused.allowed, false);
      assert.equal(refused.rate.resetSeconds, 1);
      await sleep(1_100 - (Date.now() - started));
      const next = await meter.check(rate);
      assert.equal(next.allowed, true);
      assert.equal(next.rate.remaining, 1);
    });

    it('lets exactly 50 of 200 concurrent checks through a limit of 50', async () => {
      const rate = { key: key('rl'), limit: 50, windowSeconds: 60 };
      const decisions = await Promise.all(Array.from({ length: 200 }, () => meter.check(rate)));
      const allowed = decisions.filter((d) => d.allowed);
      assert.equal(allowed.length, 50);
      assert.deepEqual(
        allowed.map((d) => d.rate.remaining).sort((a, b) => a - b),
        Array.from({ length: 50 }, (_, i) => i),
      );
      assert.equal(
        count(decisions, (d) => d.refusedBy === 'rate'),
        150,
      );
    });

    if (options.sharedAcrossInstances) {
      it('holds the limit across two separately opened meters', async () => {
        const other = await open();
        try {
          const rate = { key: key('rl'), limit: 50, windowSeconds: 60 };
          const decisions = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? other : meter).check(rate)));
          assert.equal(
            count(decisions, (d) => d.allowed),
            50,
          );
        } finally {
          await other.close();
        }
      });
    }

    it('lets exactly 10 of 100 parallel cost-1 checks spend an allowance of 10, leaving 0', async () => {
      const rate = { key: key('rl'), limit: 1_000, windowSeconds: 60 };
      const credit = { key: key('cr'), cost: 1, allowance: 10, ttlSeconds: 60 };
      const decisions = await Promise.all(Array.from({ length: 100 }, () => meter.check(rate, credit)));
      assert.equal(
        count(decisions, (d) => d.allowed),
        10,
      );
      assert.equal(
        count(decisions, (d) => d.refusedBy === 'credits'),
        90,
      );
      assert.equal(await meter.creditBalance(credit.key), 0);
      // Credit refusals took no rate tokens: only the 10 spends count against the window.
      assert.equal((await meter.check(rate)).rate.remaining, 1_000 - 11);
    });

    it('refuses a cost above the balance and spends neither credit nor rate', async () => {
      const rate = { key: key('rl'), limit: 10, windowSeconds: 60 };
      const credit = { key: key('cr'), cost: 3, allowance: 5, ttlSeconds: 60 };
      const first = await meter.check(rate, credit);
      assert.deepEqual([first.allowed, first.rate.remaining, first.credits], [true, 9, { remaining: 2 }]);

      const refused = await meter.check(rate, credit);
      assert.equal(refused.allowed, false);
      assert.equal(refused.refusedBy, 'credits');
      assert.equal(refused.rate.remaining, 9);
      assert.deepEqual(refused.credits, { remaining: 2 });
      assert.equal(await meter.creditBalance(credit.key), 2);

      const fits = await meter.check(rate, { ...credit, cost: 2 });
      assert.deepEqual([fits.allowed, fits.rate.remaining, fits.credits], [true, 8, { remaining: 0 }]);
    });

    it('does not start a balance on a first request it refuses', async () => {
      const credit = { key: key('cr'), cost: 6, allowance: 5, ttlSeconds: 60 };
      const refused = await meter.check({ key: key('rl'), limit: 10, windowSeconds: 60 }, credit);
      assert.equal(refused.refusedBy, 'credits');
      assert.deepEqual(refused.credits, { remaining: 5 });
      assert.equal(await meter.creditBalance(credit.key), null);
    });

    it('spends no credit on a request the rate limit refuses', async () => {
      const rate = { key: key('rl'), limit: 1, windowSeconds: 60 };
      const credit = { key: key('cr'), cost: 2, allowance: 10, ttlSeconds: 60 };
      assert.deepEqual((await meter.check(rate, credit)).credits, { remaining: 8 });
      const refused = await meter.check(rate, credit);
      assert.equal(refused.refusedBy, 'rate');
      assert.deepEqual(refused.credits, { remaining: 8 });
      assert.equal(await meter.creditBalance(credit.key), 8);
    });

    it('refunds what a check spent: one window slot and the cost, never past a missing key', async () => {
      const rate = { key: key('rl'), limit: 2, windowSeconds: 60 };
      const credit = { key: key('cr'), cost: 5, allowance: 10, ttlSeconds: 60 };
      await meter.check(rate, credit);
      const second = await meter.check(rate, credit);
      assert.deepEqual([second.rate.remaining, second.credits], [0, { remaining: 0 }]);
      assert.equal(await meter.refund(rate.key, { key: credit.key, cost: credit.cost }), 5);
      const again = await meter.check(rate, credit);
      assert.deepEqual([again.allowed, again.rate.remaining, again.credits], [true, 0, { remaining: 0 }]);
      // Nothing to refund into: no window, no balance is created.
      assert.equal(await meter.refund(key('rl'), { key: key('cr'), cost: 3 }), null);
      assert.equal(await meter.creditBalance(`cr:${sequence}`), null);
    });

    it('always passes a cost of 0 and reports the balance', async () => {
      const rate = { key: key('rl'), limit: 10, windowSeconds: 60 };
      const credit = { key: key('cr'), cost: 0, allowance: 7, ttlSeconds: 60 };
      const fresh = await meter.check(rate, credit);
      assert.deepEqual([fresh.allowed, fresh.credits], [true, { remaining: 7 }]);
      assert.equal(await meter.creditBalance(credit.key), 7);
      await meter.setCreditBalance(credit.key, 0, 60);
      const empty = await meter.check(rate, credit);
      assert.deepEqual([empty.allowed, empty.credits], [true, { remaining: 0 }]);
    });

    it('reads and overrides a credit balance', async () => {
      const credit = { key: key('cr'), cost: 2, allowance: 100, ttlSeconds: 60 };
      assert.equal(await meter.creditBalance(credit.key), null);
      await meter.setCreditBalance(credit.key, 42, 60);
      assert.equal(await meter.creditBalance(credit.key), 42);
      assert.deepEqual((await meter.check({ key: key('rl'), limit: 10, windowSeconds: 60 }, credit)).credits, { remaining: 40 });
      await meter.setCreditBalance(credit.key, 7, 60);
      assert.equal(await meter.creditBalance(credit.key), 7);
    });

    it('lets a balance expire after ttlSeconds and restarts it at the allowance', async () => {
      const rate = { key: key('rl'), limit: 10, windowSeconds: 60 };
      const credit = { key: key('cr'), cost: 1, allowance: 10, ttlSeconds: 1 };
      assert.deepEqual((await meter.check(rate, credit)).credits, { remaining: 9 });
      await sleep(1_100);
      assert.equal(await meter.creditBalance(credit.key), null);
      assert.deepEqual((await meter.check(rate, credit)).credits, { remaining: 9 });
    });

    it('increments a counter whose expiry starts at the first increment', async () => {
      const counter = key('n');
      assert.equal(await meter.increment(counter, 1), 1);
      await sleep(600);
      assert.equal(await meter.increment(counter, 1), 2);
      await sleep(500);
      assert.equal(await meter.increment(counter, 1), 1);
    });

    it('rejects malformed rules as invalid_argument', async () => {
      const isInvalid = (e: unknown) => isAppError(e) && e.code === 'invalid_argument';
      await assert.rejects(meter.check({ key: key('rl'), limit: 5, windowSeconds: 0 }), isInvalid);
      await assert.rejects(
        meter.check({ key: key('rl'), limit: 5, windowSeconds: 60 }, { key: key('cr'), cost: -1, allowance: 5, ttlSeconds: 60 }),
        isInvalid,
      );
      await assert.rejects(meter.increment(key('n'), 0), isInvalid);
    });

    it('answers ping', async () => {
      await meter.ping();
    });
  });
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

function redisOutageSuite(): void {
  describe('Meter on Redis: outages', () => {
    const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
    let redis: ScratchRedis;
    let meter: Meter | undefined;

    before(async function () {
      if (!hasRedisServer) skipBecause(this, 'no redis-server on this machine to stop and start');
      redis = new ScratchRedis(await freePort());
      await redis.start();
    });
    after(async () => {
      await meter?.close();
      await redis?.stop();
    });

    it('refuses to open with unavailable, quickly, when nothing listens', async () => {
      const started = Date.now();
      await assert.rejects(openMeter({ redisUrl: `redis://127.0.0.1:${await freePort()}` }), isUnavailable);
      assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
    });

    it('fails fast with unavailable while Redis is down and recovers by itself when it returns', async function () {
      this.timeout(20_000);
      const opened = await openMeter({ redisUrl: redis.url, namespace: runNamespace });
      meter = opened;
      const rate = { key: 'rl:outage', limit: 5, windowSeconds: 60 };
      assert.equal((await opened.check(rate)).rate.remaining, 4);

      await redis.stop();
      for (const call of [() => opened.check(rate), () => opened.ping(), () => opened.increment('n:outage', 60)]) {
        const started = Date.now();
        await assert.rejects(call(), isUnavailable);
        assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`);
      }

      await redis.start();
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          await opened.ping();
          break;
        } catch (error) {
          assert.ok(isUnavailable(error), String(error));
          if (Date.now() > deadline) throw error;
          await sleep(100);
        }
      }
      // The restarted server has neither the old window nor the cached script, so this also covers NOSCRIPT.
      assert.equal((await opened.check(rate)).rate.remaining, 4);
      assert.equal(await opened.increment('n:outage', 60), 1);
    });

    it('gives up on a server that holds the connection but never answers, and carries on after it wakes', async function () {
      this.timeout(20_000);
      const closing = await openMeter({ redisUrl: redis.url, namespace: runNamespace });
      const staying = await openMeter({ redisUrl: redis.url, namespace: runNamespace });
      try {
        redis.signal('SIGSTOP');
        try {
          for (const frozen of [closing, staying]) {
            const started = Date.now();
            await assert.rejects(frozen.check({ key: 'rl:frozen', limit: 5, windowSeconds: 60 }), isUnavailable);
            assert.ok(Date.now() - started < 3_000, `check took ${Date.now() - started} ms`);
          }
          const started = Date.now();
          await closing.close();
          assert.ok(Date.now() - started < 3_000, `close took ${Date.now() - started} ms`);
        } finally {
          redis.signal('SIGCONT');
        }
        // Replies stay matched to their requests after the late answer to the abandoned one arrives.
        assert.equal((await staying.check({ key: 'rl:thawed', limit: 5, windowSeconds: 60 })).rate.remaining, 4);
        assert.equal(await staying.increment('n:thawed', 60), 1);
        assert.equal(await staying.creditBalance('cr:thawed'), null);
      } finally {
        await closing.close();
        await staying.close();
      }
    });
  });
}

meterContract('memory', () => openMeter({}), { sharedAcrossInstances: false });

const redisUrl = process.env.REDIS_URL;
if (redisUrl) {
  meterContract('redis', () => openMeter({ redisUrl, namespace: runNamespace }), { sharedAcrossInstances: true });
  redisOutageSuite();
} else {
  describe('Meter contract: redis', () => {
    it.skip('skipped: REDIS_URL is not set');
  });
}
