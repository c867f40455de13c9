/** Pieces both bus adapters share, so they name, encode and retry the same way. */
import { pino, type Logger } from 'pino';
import { runWithContext } from '../context.js';
import { AppError } from '../errors.js';
import { isRetryable } from '../failures.js';
import type { BusOptions, Delivery } from './bus.js';

export const DEFAULT_MAX_DELIVERIES = 5;
/** One at a time keeps a queue strictly ordered unless a consumer opts into concurrency. */
export const DEFAULT_PREFETCH = 1;
/** How long close() lets running handlers finish before their messages are handed back. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 5_000;
/** Retryable failures of a message are retried this long (an outage of the store, a peer or the broker). */
export const DEFAULT_OUTAGE_WINDOW_MS = 10 * 60 * 1000;
export const DEFAULT_REDELIVERY_DELAY_MS = 100;
export const DEFAULT_REDELIVERY_MAX_DELAY_MS = 10_000;

export type BusLogger = Logger;

/** The header a replayed dead letter carries: how many times an operator has replayed it. */
export const REPLAY_HEADER = 'x-replay';

/** The replay generation of a message's headers (0: never replayed). */
export function replayOf(envelope: { headers: Record<string, string> } | undefined): number {
  const n = Number(envelope?.headers[REPLAY_HEADER] ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** The headers of a dead letter as it goes back on its queue: the sender's, one more replay. */
export function replayedHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  return { ...headers, [REPLAY_HEADER]: String(replayOf({ headers: headers ?? {} }) + 1) };
}

/**
 * Runs a delivery's handler in a context of its own, named `requestId` and acting for
 * nobody: otherwise it would inherit whatever context woke it (the sender's request, with
 * its principal), and its calls would act for that. A handler names whom it acts for.
 */
export function inDeliveryContext<T>(requestId: string, handler: () => T): T {
  return runWithContext({ requestId }, handler);
}

export function defaultLogger(logger: BusLogger | undefined): BusLogger {
  return logger ?? pino({ level: 'silent' });
}

export function resolveMaxDeliveries(options: BusOptions): number {
  const max = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  if (!Number.isInteger(max) || max < 1) {
    throw new AppError('invalid_argument', `maxDeliveries must be a positive integer, got ${String(max)}.`);
  }
  return max;
}

export function resolvePrefetch(prefetch: number | undefined): number {
  const value = prefetch ?? DEFAULT_PREFETCH;
  // AMQP carries prefetch as an unsigned 16-bit count, where 0 would mean unlimited.
  if (!Number.isInteger(value) || value < 1 || value > 65_535) {
    throw new AppError('invalid_argument', `prefetch must be an integer between 1 and 65535, got ${String(value)}.`);
  }
  return value;
}

/** Queue and topic names become AMQP names and store values, so keep them printable and bounded. */
export function assertName(kind: 'queue' | 'topic', name: string): void {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,200}$/.test(name)) {
    throw new AppError('invalid_argument', `Invalid ${kind} name ${JSON.stringify(name)}: use 1-200 of A-Z a-z 0-9 _ . : -`);
  }
}

export function assertLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 0) {
    throw new AppError('invalid_argument', `limit must be a non-negative integer, got ${String(limit)}.`);
  }
}

export function namespaced(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}.${name}` : name;
}

export function deadQueueOf(queue: string): string {
  return `${queue}.dead`;
}

/** Bodies travel as JSON on both adapters so a handler sees the same value whichever bus runs. */
export function encodeBody(body: unknown): string {
  return JSON.stringify(body) ?? 'null';
}

export function decodeBody<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Capped exponential delay: base, 2×base, 4×base… never above cap. */
export function backoffMs(attempt: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, Math.min(attempt, 30)));
}

/** Full jitter: uniform in [0, capped exponential delay], so retries after an outage spread out. */
export function jitteredBackoffMs(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * backoffMs(attempt, baseMs, capMs));
}

export interface RetryPolicy {
  maxDeliveries: number;
  outageWindowMs: number;
  redeliveryDelayMs: number;
  redeliveryMaxDelayMs: number;
}

export function resolveRetryPolicy(options: BusOptions): RetryPolicy {
  const outageWindowMs = options.outageWindowMs ?? DEFAULT_OUTAGE_WINDOW_MS;
  const redeliveryDelayMs = options.redeliveryDelayMs ?? DEFAULT_REDELIVERY_DELAY_MS;
  const redeliveryMaxDelayMs = options.redeliveryMaxDelayMs ?? Math.max(redeliveryDelayMs, DEFAULT_REDELIVERY_MAX_DELAY_MS);
  for (const [name, value] of Object.entries({ outageWindowMs, redeliveryDelayMs, redeliveryMaxDelayMs })) {
    if (!Number.isInteger(value) || value < 0)
      throw new AppError('invalid_argument', `${name} must be a non-negative integer, got ${String(value)}.`);
  }
  return { maxDeliveries: resolveMaxDeliveries(options), outageWindowMs, redeliveryDelayMs, redeliveryMaxDelayMs };
}

/** What a message carries about its earlier failures, whichever adapter keeps it. */
export interface FailureHistory {
  /** Deliveries so far that counted, this one included. */
  deliveryCount: number;
  /** Retryable failures so far, before this one. */
  retries: number;
  /** Epoch ms of the first retryable failure, null if none yet. */
  firstFailureAt: number | null;
}

export type FailureDecision =
  { action: 'retry'; delayMs: number; counted: boolean; retries: number; firstFailureAt: number | null } | { action: 'dead-letter' };

/** The one rule both adapters follow when a handler throws. */
export function decideOnFailure(err: unknown, history: FailureHistory, policy: RetryPolicy, now = Date.now()): FailureDecision {
  if (isRetryable(err)) {
    const firstFailureAt = history.firstFailureAt ?? now;
    if (now - firstFailureAt >= policy.outageWindowMs) return { action: 'dead-letter' };
    const retries = history.retries + 1;
    const delayMs = jitteredBackoffMs(retries - 1, policy.redeliveryDelayMs, policy.redeliveryMaxDelayMs);
    return {
      action: 'retry',
      delayMs: Math.min(delayMs, Math.max(0, firstFailureAt + policy.outageWindowMs - now)),
      counted: false,
      retries,
      firstFailureAt,
    };
  }
  if (history.deliveryCount >= policy.maxDeliveries) return { action: 'dead-letter' };
  const delayMs = jitteredBackoffMs(history.deliveryCount - 1, policy.redeliveryDelayMs, policy.redeliveryMaxDelayMs);
  return { action: 'retry', delayMs, counted: true, retries: history.retries, firstFailureAt: history.firstFailureAt };
}

/** The failure reported for a message whose last allowed delivery died with its process. */
export function unfinishedDelivery(): AppError {
  const reason = 'its last allowed delivery never finished (the worker stopped during it)';
  return new AppError('internal', `Dead-lettered: ${reason}.`, { reason });
}

/** The delivery a handler gets, with the bus's verdict on a failure attached (not enumerable, so it compares as plain data). */
export function deliveryWithVerdict(delivery: Delivery, history: FailureHistory, policy: RetryPolicy): Delivery {
  return Object.defineProperty(delivery, 'willDeadLetter', {
    value: (error: unknown) => decideOnFailure(error, history, policy).action === 'dead-letter',
    enumerable: false,
  });
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Timers that close() can cancel at once, so a closed bus leaves nothing scheduled. */
export class Timers {
  private readonly pending = new Map<NodeJS.Timeout, () => void>();

  /** Resolves after `ms`, or early when cancelAll() runs. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        resolve();
      }, ms);
      this.pending.set(timer, resolve);
    });
  }

  /** Runs `fn` after `ms` unless cancelled first. */
  after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      fn();
    }, ms);
    this.pending.set(timer, () => undefined);
  }

  cancelAll(): void {
    for (const [timer, release] of this.pending) {
      clearTimeout(timer);
      release();
    }
    this.pending.clear();
  }
}

/** Waits for `work`, but gives up after `ms`; reports whether it finished in time. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
