import { strict as assert } from 'node:assert';
import { LocalLimiter } from './local-limiter';

describe('LocalLimiter', () => {
  it('allows the limit per fixed window and counts the reset down', () => {
    let now = 0;
    const limiter = new LocalLimiter({ clock: () => now });
    const rule = { key: 'rl:demo:1', limit: 2, windowSeconds: 10 };
    assert.deepEqual(limiter.check(rule), { allowed: true, rate: { limit: 2, remaining: 1, resetSeconds: 10 } });
    now = 2_500;
    assert.deepEqual(limiter.check(rule), { allowed: true, rate: { limit: 2, remaining: 0, resetSeconds: 8 } });
    assert.deepEqual(limiter.check(rule), { allowed: false, rate: { limit: 2, remaining: 0, resetSeconds: 8 } });
    now = 10_000;
    assert.equal(limiter.check(rule).allowed, true);
  });

  it('holds at most maxKeys windows, dropping expired ones first, then the oldest', () => {
    let now = 0;
    const limiter = new LocalLimiter({ maxKeys: 3, clock: () => now });
    for (let i = 0; i < 3; i++) limiter.check({ key: `k${i}`, limit: 1, windowSeconds: 1 + i });
    now = 1_500; // k0 has expired
    limiter.check({ key: 'k3', limit: 1, windowSeconds: 60 });
    assert.equal(limiter.size, 3);
    assert.equal(limiter.check({ key: 'k1', limit: 1, windowSeconds: 2 }).allowed, false, 'k1 kept its window');
    for (let i = 0; i < 100; i++) limiter.check({ key: `many${i}`, limit: 1, windowSeconds: 60 });
    assert.equal(limiter.size, 3);
  });
});
