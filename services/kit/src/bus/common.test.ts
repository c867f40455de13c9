import assert from 'node:assert/strict';
import {
  assertName,
  backoffMs,
  decodeBody,
  encodeBody,
  namespaced,
  resolveMaxDeliveries,
  resolvePrefetch,
  settleWithin,
  Timers,
} from './common.js';

describe('bus common helpers', () => {
  it('doubles the backoff per attempt up to the cap', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 10, 1_000].map((n) => backoffMs(n, 100, 1_000)),
      [100, 200, 400, 800, 1_000, 1_000],
    );
  });

  it('prefixes names with the namespace when there is one', () => {
    assert.equal(namespaced('test-1', 'jobs'), 'test-1.jobs');
    assert.equal(namespaced(undefined, 'jobs'), 'jobs');
  });

  it('round-trips bodies as JSON, undefined as null', () => {
    assert.deepEqual(decodeBody(encodeBody({ a: [1, 'b'], d: new Date(0) })), { a: [1, 'b'], d: '1970-01-01T00:00:00.000Z' });
    assert.equal(decodeBody(encodeBody(undefined)), null);
  });

  it('validates names, prefetch and maxDeliveries as invalid_argument', () => {
    assert.doesNotThrow(() => assertName('queue', 'planning.runs:v1_x-2'));
    for (const bad of ['', 'with space', 'x'.repeat(201), 'slash/y'])
      assert.throws(() => assertName('queue', bad), { code: 'invalid_argument' });
    assert.equal(resolvePrefetch(undefined), 1);
    assert.throws(() => resolvePrefetch(1.5), { code: 'invalid_argument' });
    assert.equal(resolveMaxDeliveries({}), 5);
    assert.throws(() => resolveMaxDeliveries({ maxDeliveries: 0 }), { code: 'invalid_argument' });
  });

  it('cancels pending sleeps at once', async () => {
    const timers = new Timers();
    const started = Date.now();
    const sleeping = timers.sleep(10_000);
    timers.cancelAll();
    await sleeping;
    assert.ok(Date.now() - started < 1_000);
  });

  it('reports whether work settled within the time allowed', async () => {
    assert.equal(await settleWithin(Promise.reject(new Error('x')), 100), true);
    assert.equal(await settleWithin(new Promise(() => undefined), 20), false);
  });
});
