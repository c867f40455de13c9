/** Argument checks and decision shaping shared by every meter adapter, so they answer alike. */
import { AppError } from '../errors.js';
import type { CreditRule, MeterDecision, RateLimitRule } from './meter.js';

/** What an adapter's atomic check-and-spend found, before it becomes a `MeterDecision`. */
export interface CheckOutcome {
  allowed: boolean;
  refusedBy?: 'rate' | 'credits';
  /** Rate tokens left in the window after this request. */
  remaining: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
  /** Credit balance after this request; meaningful only when a credit rule was given. */
  balance: number;
}

function invalid(message: string): AppError {
  return new AppError('invalid_argument', message);
}

export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw invalid('Meter key must be a non-empty string.');
}

function requireInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw invalid(`${name} must be an integer >= ${min}, got ${value}.`);
}

/** Validates a rate rule and returns its window in whole milliseconds. */
export function windowMsOf(rate: RateLimitRule): number {
  checkKey(rate.key);
  requireInteger('limit', rate.limit, 0);
  if (!Number.isFinite(rate.windowSeconds) || rate.windowSeconds <= 0) {
    throw invalid(`windowSeconds must be > 0, got ${rate.windowSeconds}.`);
  }
  return Math.max(1, Math.round(rate.windowSeconds * 1000));
}

export function checkCreditRule(credit: CreditRule): void {
  checkKey(credit.key);
  requireInteger('cost', credit.cost, 0);
  requireInteger('allowance', credit.allowance, 0);
  requireInteger('ttlSeconds', credit.ttlSeconds, 1);
}

export function checkBalance(key: string, balance: number, ttlSeconds: number): void {
  checkKey(key);
  requireInteger('balance', balance, Number.MIN_SAFE_INTEGER);
  requireInteger('ttlSeconds', ttlSeconds, 1);
}

export function checkCounter(key: string, ttlSeconds: number): void {
  checkKey(key);
  requireInteger('ttlSeconds', ttlSeconds, 1);
}

/** Whole seconds until the window ends, rounded up and never 0 while it is open (`t=` and `Retry-After`). */
export function resetSecondsOf(resetMs: number): number {
  return Math.max(1, Math.ceil(resetMs / 1000));
}

export function toDecision(outcome: CheckOutcome, rate: RateLimitRule, credit?: CreditRule): MeterDecision {
  const decision: MeterDecision = {
    allowed: outcome.allowed,
    rate: { limit: rate.limit, remaining: Math.max(0, outcome.remaining), resetSeconds: resetSecondsOf(outcome.resetMs) },
  };
  if (outcome.refusedBy) decision.refusedBy = outcome.refusedBy;
  if (credit) decision.credits = { remaining: outcome.balance };
  return decision;
}
