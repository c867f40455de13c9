import assert from 'node:assert/strict';
import { AppError } from './errors.js';
import { failureReason, isRetryable, retryUntilDone } from './failures.js';
import { decideOnFailure, jitteredBackoffMs, type RetryPolicy } from './bus/common.js';

const policy: RetryPolicy = { maxDeliveries: 3, outageWindowMs: 60_000, redeliveryDelayMs: 100, redeliveryMaxDelayMs: 1_000 };

describe('failure classification', () => {
  it('retries a dependency that is unavailable or slow, nothing else', () => {
    assert.equal(isRetryable(new AppError('unavailable', 'down')), true);
    assert.equal(isRetryable(new AppError('deadline_exceeded', 'slow')), true);
    assert.equal(isRetryable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5'), { code: 'ECONNREFUSED' })), true);
    assert.equal(isRetryable(Object.assign(new Error('x'), { code: 14, metadata: {} })), true);
    assert.equal(isRetryable(Object.assign(new Error('x'), { name: 'MongoNetworkError' })), true);
    assert.equal(isRetryable(new AppError('invalid_argument', 'bad')), false);
    assert.equal(isRetryable(new AppError('internal', 'bug')), false);
    assert.equal(isRetryable(new TypeError('undefined is not a function')), false);
    assert.equal(isRetryable('text'), false);
  });

  it('words a reason without addresses or transport text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:50053'), { code: 'ECONNREFUSED' });
    assert.equal(failureReason(refused), 'a service it depends on stayed unavailable for the whole outage window');
    assert.equal(
      failureReason(new AppError('deadline_exceeded', '4 DEADLINE_EXCEEDED at 10.0.0.3')),
      'a service it depends on kept timing out for the whole outage window',
    );
    assert.equal(failureReason(new TypeError('x is undefined at /srv/app.js:3')), 'it failed with an internal error');
    assert.equal(failureReason(new AppError('invalid_argument', 'The chunk is malformed.')), 'The chunk is malformed');
  });
});

describe('decideOnFailure', () => {
  it('retries a retryable failure without counting it, from its first failure until the window ends', () => {
    const first = decideOnFailure(new AppError('unavailable', 'x'), { deliveryCount: 3, retries: 0, firstFailureAt: null }, policy, 1_000);
    assert.equal(first.action, 'retry');
    assert.ok(first.action === 'retry' && !first.counted && first.retries === 1 && first.firstFailureAt === 1_000);
    assert.ok(first.action === 'retry' && first.delayMs >= 0 && first.delayMs <= 100);
    const late = decideOnFailure(
      new AppError('unavailable', 'x'),
      { deliveryCount: 1, retries: 40, firstFailureAt: 1_000 },
      policy,
      60_950,
    );
    assert.ok(late.action === 'retry' && late.delayMs <= 50, 'the last retry lands inside the window');
    assert.deepEqual(
      decideOnFailure(new AppError('unavailable', 'x'), { deliveryCount: 1, retries: 41, firstFailureAt: 1_000 }, policy, 61_000),
      { action: 'dead-letter' },
    );
  });

  it('counts any other failure and dead-letters it on the last allowed delivery', () => {
    const again = decideOnFailure(new Error('bug'), { deliveryCount: 2, retries: 0, firstFailureAt: null }, policy);
    assert.ok(again.action === 'retry' && again.counted);
    assert.deepEqual(decideOnFailure(new Error('bug'), { deliveryCount: 3, retries: 0, firstFailureAt: null }, policy), {
      action: 'dead-letter',
    });
  });

  it('draws the delay uniformly up to the capped exponential', () => {
    assert.equal(
      jitteredBackoffMs(3, 100, 1_000, () => 0),
      0,
    );
    assert.equal(
      jitteredBackoffMs(3, 100, 1_000, () => 0.5),
      400,
    );
    assert.equal(
      jitteredBackoffMs(10, 100, 1_000, () => 0.999),
      999,
    );
  });
});

describe('retryUntilDone', () => {
  it('keeps retrying retryable failures until the work succeeds', async () => {
    let calls = 0;
    const done = await retryUntilDone(
      async () => {
        if (++calls < 8) throw new AppError('unavailable', 'not up yet');
      },
      { baseDelayMs: 1, maxDelayMs: 5, maxPermanentAttempts: 2 },
    );
    assert.equal(done, true);
    assert.equal(calls, 8);
  });

  it('gives up on permanent failures after a few attempts, and stops when told', async () => {
    let calls = 0;
    const failures: Array<number | null> = [];
    assert.equal(
      await retryUntilDone(
        async () =>
          void (
            calls++,
            (() => {
              throw new Error('bug');
            })()
          ),
        { baseDelayMs: 1, maxPermanentAttempts: 3, onFailure: (_e, _n, delay) => failures.push(delay) },
      ),
      false,
    );
    assert.equal(calls, 3);
    assert.equal(failures.at(-1), null);
    let stop = false;
    const pending = retryUntilDone(
      async () => {
        throw new AppError('unavailable', 'down');
      },
      { baseDelayMs: 10_000, maxDelayMs: 10_000, stopped: () => stop },
    );
    setTimeout(() => (stop = true), 50);
    const started = Date.now();
    assert.equal(await pending, false);
    assert.ok(Date.now() - started < 1_000, 'a stop wakes the wait');
  });
});
