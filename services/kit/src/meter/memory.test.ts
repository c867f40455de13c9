import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAppError } from '../errors.js';
import { MemoryMeter } from './memory.js';

/** A clock the test moves by hand, so window and expiry edges are exact. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('MemoryMeter', () => {
  let clock: ReturnType<typeof manualClock>;
  let meter: MemoryMeter;

  beforeEach(() => {
    clock = manualClock();
    meter = new MemoryMeter({ now: clock.now });
  });
  afterEach(() => meter.close());

  it('counts resetSeconds down from the first request and rounds up', async () => {
    const rate = { key: 'rl', limit: 2, windowSeconds: 10 };
    assert.equal((await meter.check(rate)).rate.resetSeconds, 10);
    clock.advance(8_500);
    const second = await meter.check(rate);
    assert.deepEqual(second.rate, { limit: 2, remaining: 0, resetSeconds: 2 });
    clock.advance(1_499);
    assert.deepEqual((await meter.check(rate)).rate, { limit: 2, remaining: 0, resetSeconds: 1 });
    clock.advance(1);
    assert.deepEqual((await meter.check(rate)).rate, { limit: 2, remaining: 1, resetSeconds: 10 });
  });

  it('forgets a credit balance and a counter the moment they expire, before any sweep', async () => {
    await meter.setCreditBalance('cr', 5, 2);
    assert.equal(await meter.increment('n', 2), 1);
    clock.advance(1_999);
    assert.equal(await meter.creditBalance('cr'), 5);
    assert.equal(await meter.increment('n', 2), 2);
    clock.advance(1);
    assert.equal(await meter.creditBalance('cr'), null);
    assert.equal(await meter.increment('n', 2), 1);
  });

  it('sweeps away entries nobody reads again', async () => {
    await meter.check({ key: 'rl', limit: 5, windowSeconds: 1 }, { key: 'cr', cost: 1, allowance: 5, ttlSeconds: 3 });
    await meter.increment('n', 1);
    assert.equal(meter.size, 3);
    clock.advance(1_000);
    meter.sweep();
    assert.equal(meter.size, 1);
    clock.advance(2_000);
    meter.sweep();
    assert.equal(meter.size, 0);
  });

  it('sweeps on its own timer', async () => {
    const swept = new MemoryMeter({ now: clock.now, sweepIntervalMs: 5 });
    try {
      await swept.increment('n', 1);
      clock.advance(1_000);
      await sleep(30);
      assert.equal(swept.size, 0);
    } finally {
      await swept.close();
    }
  });

  it('answers unavailable once closed', async () => {
    await meter.close();
    await assert.rejects(meter.ping(), (e) => isAppError(e) && e.code === 'unavailable');
  });
});
