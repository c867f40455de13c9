/** The embedded meter: one process, state in maps, the same window and credit rules as the Redis script. */
import { AppError } from '../errors.js';
import type { CreditRule, Meter, MeterDecision, RateLimitRule } from './meter.js';
import { checkBalance, checkCounter, checkCreditRule, checkKey, toDecision, windowMsOf, type CheckOutcome } from './rules.js';

interface Window {
  count: number;
  resetAt: number;
}

interface Counter {
  value: number;
  expiresAt: number;
}

export interface MemoryMeterOptions {
  /** Whole milliseconds on a monotonic clock; injectable so tests can move time. */
  now?: () => number;
  /** How often expired windows and counters are dropped even if never read again. */
  sweepIntervalMs?: number;
}

export class MemoryMeter implements Meter {
  readonly #now: () => number;
  readonly #windows = new Map<string, Window>();
  /** Credit balances and `increment` counters share one keyspace, as they do in Redis. */
  readonly #counters = new Map<string, Counter>();
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(options: MemoryMeterOptions = {}) {
    // Whole milliseconds, as the Redis script counts, so float noise never bumps a ceil to the next second.
    this.#now = options.now ?? (() => Math.floor(performance.now()));
    this.#sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 30_000);
    // The sweep is housekeeping; it must never keep the process alive.
    this.#sweeper.unref();
  }

  /** Entries currently held, expired or not; lets tests see that memory stays bounded. */
  get size(): number {
    return this.#windows.size + this.#counters.size;
  }

  /** Drops every expired window and counter. */
  sweep(): void {
    const now = this.#now();
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
    for (const [key, counter] of this.#counters) if (counter.expiresAt <= now) this.#counters.delete(key);
  }

  async check(rate: RateLimitRule, credit?: CreditRule): Promise<MeterDecision> {
    this.#open();
    const windowMs = windowMsOf(rate);
    if (credit) checkCreditRule(credit);
    return toDecision(this.#checkAndSpend(rate, windowMs, credit), rate, credit);
  }

  /** Synchronous from first read to last write, which is what makes it atomic in one process. */
  #checkAndSpend(rate: RateLimitRule, windowMs: number, credit?: CreditRule): CheckOutcome {
    const now = this.#now();
    let window = this.#windows.get(rate.key);
    if (!window || window.resetAt <= now) window = { count: 0, resetAt: now + windowMs };
    const resetMs = window.resetAt - now;

    const stored = credit ? this.#live(credit.key, now) : undefined;
    let balance = stored?.value ?? credit?.allowance ?? 0;

    if (window.count >= rate.limit) {
      return { allowed: false, refusedBy: 'rate', remaining: rate.limit - window.count, resetMs, balance };
    }
    if (credit) {
      if (credit.cost > 0 && balance < credit.cost) {
        return { allowed: false, refusedBy: 'credits', remaining: rate.limit - window.count, resetMs, balance };
      }
      const counter = stored ?? { value: credit.allowance, expiresAt: now + credit.ttlSeconds * 1000 };
      counter.value -= credit.cost;
      balance = counter.value;
      this.#counters.set(credit.key, counter);
    }
    window.count += 1;
    this.#windows.set(rate.key, window);
    return { allowed: true, remaining: rate.limit - window.count, resetMs, balance };
  }

  async refund(rateKey: string, credit?: { key: string; cost: number }): Promise<number | null> {
    this.#open();
    checkKey(rateKey);
    const now = this.#now();
    const window = this.#windows.get(rateKey);
    if (window && window.resetAt > now && window.count > 0) window.count -= 1;
    if (!credit) return null;
    checkKey(credit.key);
    const counter = this.#live(credit.key, now);
    if (!counter) return null;
    counter.value += credit.cost;
    return counter.value;
  }

  async creditBalance(key: string): Promise<number | null> {
    this.#open();
    checkKey(key);
    return this.#live(key, this.#now())?.value ?? null;
  }

  async setCreditBalance(key: string, balance: number, ttlSeconds: number): Promise<void> {
    this.#open();
    checkBalance(key, balance, ttlSeconds);
    this.#counters.set(key, { value: balance, expiresAt: this.#now() + ttlSeconds * 1000 });
  }

  async increment(key: string, ttlSeconds: number): Promise<number> {
    this.#open();
    checkCounter(key, ttlSeconds);
    const now = this.#now();
    const counter = this.#live(key, now) ?? { value: 0, expiresAt: now + ttlSeconds * 1000 };
    counter.value += 1;
    this.#counters.set(key, counter);
    return counter.value;
  }

  async ping(): Promise<void> {
    this.#open();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.#windows.clear();
    this.#counters.clear();
  }

  /** The counter under `key` unless it has expired, in which case it is dropped on the spot. */
  #live(key: string, now: number): Counter | undefined {
    const counter = this.#counters.get(key);
    if (counter && counter.expiresAt <= now) {
      this.#counters.delete(key);
      return undefined;
    }
    return counter;
  }

  #open(): void {
    if (this.#closed) throw new AppError('unavailable', 'The meter is closed.');
  }
}
