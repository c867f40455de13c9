import { secondsSince, type Metrics } from '../metrics/metrics.js';
import type { CreditRule, Meter, RateLimitRule } from './meter.js';

/** Times every meter call (a Redis round trip, or the embedded meter's work) by operation and result. */
export function observeMeter(meter: Meter, metrics: Metrics, backend: 'redis' | 'memory'): Meter {
  const timed =
    <A extends unknown[], R>(op: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = process.hrtime.bigint();
      try {
        const out = await fn(...args);
        metrics.meterRoundTrip.observe({ backend, op, result: 'ok' }, secondsSince(started));
        return out;
      } catch (err) {
        metrics.meterRoundTrip.observe({ backend, op, result: 'error' }, secondsSince(started));
        throw err;
      }
    };
  return {
    check: timed('check', (rate: RateLimitRule, credit?: CreditRule) => meter.check(rate, credit)),
    refund: timed('refund', (key: string, credit?: { key: string; cost: number }) => meter.refund(key, credit)),
    creditBalance: timed('credit_balance', (key: string) => meter.creditBalance(key)),
    setCreditBalance: timed('set_credit_balance', (key: string, balance: number, ttl: number) => meter.setCreditBalance(key, balance, ttl)),
    increment: timed('increment', (key: string, ttl: number) => meter.increment(key, ttl)),
    ping: timed('ping', () => meter.ping()),
    close: () => meter.close(),
  };
}
