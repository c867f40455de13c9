import type { MeterDecision, RateLimitRule } from '@supply/kit';

interface Window {
  count: number;
  resetAt: number;
}

export interface LocalLimiterOptions {
  /** Windows held at most; past it expired ones are swept, then the oldest dropped. */
  maxKeys?: number;
  /** Monotonic milliseconds. */
  clock?: () => number;
}

/**
 * The rate limiter of last resort while the shared meter is unreachable: fixed windows in
 * this process only, so each gateway replica allows up to the limit on its own.
 */
export class LocalLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #maxKeys: number;
  readonly #clock: () => number;

  constructor(options: LocalLimiterOptions = {}) {
    this.#maxKeys = options.maxKeys ?? 10_000;
    this.#clock = options.clock ?? (() => performance.now());
  }

  get size(): number {
    return this.#windows.size;
  }

  check(rule: RateLimitRule): { allowed: boolean; rate: MeterDecision['rate'] } {
    const now = this.#clock();
    let window = this.#windows.get(rule.key);
    if (!window || window.resetAt <= now) {
      if (window) this.#windows.delete(rule.key);
      else if (this.#windows.size >= this.#maxKeys) this.#makeRoom(now);
      window = { count: 0, resetAt: now + rule.windowSeconds * 1000 };
      this.#windows.set(rule.key, window);
    }
    const allowed = window.count < rule.limit;
    if (allowed) window.count++;
    return {
      allowed,
      rate: {
        limit: rule.limit,
        remaining: Math.max(0, rule.limit - window.count),
        resetSeconds: Math.max(1, Math.ceil((window.resetAt - now) / 1000)),
      },
    };
  }

  #makeRoom(now: number): void {
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
    // Insertion order is window start order: the first key is the oldest window.
    if (this.#windows.size >= this.#maxKeys) this.#windows.delete(this.#windows.keys().next().value!);
  }
}
