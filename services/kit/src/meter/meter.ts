/**
 * The meter port: rate-limit windows and credit balances, each check-and-spend atomic.
 * Memory adapter for one process, Redis adapter (one Lua script per call) for many.
 */

export interface RateLimitRule {
  /** e.g. `rl:<tenant>:<tokenId>` */
  key: string;
  /** Requests allowed per window. */
  limit: number;
  windowSeconds: number;
}

export interface CreditRule {
  /** e.g. `cr:<tenant>:<period>`; the balance starts at `allowance` when first seen. */
  key: string;
  cost: number;
  allowance: number;
  /** The balance key expires this long after first use (end of period plus grace). */
  ttlSeconds: number;
}

export interface MeterDecision {
  allowed: boolean;
  /** Why not, when not allowed. Rate is checked first; a refusal spends nothing. */
  refusedBy?: 'rate' | 'credits';
  rate: { limit: number; remaining: number; resetSeconds: number };
  /** Present when a credit rule was given. */
  credits?: { remaining: number };
}

export interface Meter {
  /** Checks the rate window and (if given) the credit balance, then spends both, atomically. */
  check(rate: RateLimitRule, credit?: CreditRule): Promise<MeterDecision>;
  /**
   * Gives back what an allowed `check` spent, for a request that was refused after it: one
   * slot of the rate window (while that window lasts) and `credit.cost` credits (while the
   * balance exists). Returns the credit balance after the refund, or null when there is none.
   */
  refund(rateKey: string, credit?: { key: string; cost: number }): Promise<number | null>;
  /** Reads a credit balance without spending; null when never used this period. */
  creditBalance(key: string): Promise<number | null>;
  /** Sets a credit balance (rebuild from usage records, operator top-up). */
  setCreditBalance(key: string, balance: number, ttlSeconds: number): Promise<void>;
  /** Atomic counter with expiry (e.g. failed logins per email per minute). Returns the new value. */
  increment(key: string, ttlSeconds: number): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface MeterOptions {
  /** `redis://...` selects Redis; absent selects memory. */
  redisUrl?: string;
  /** Prefix for every key. */
  namespace?: string;
}
