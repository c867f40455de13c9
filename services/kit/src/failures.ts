/**
 * The one place that decides whether a failure is worth retrying: a dependency (the
 * store, a gRPC peer, the broker) that is unavailable or too slow will likely answer
 * later; anything else (bad data, a bug) fails the same way every time.
 */
import { isAppError } from './errors';

/** Socket and DNS errors a peer that is down or restarting produces. */
const TRANSIENT_SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
/** gRPC UNAVAILABLE, DEADLINE_EXCEEDED. */
const TRANSIENT_GRPC_STATUSES = new Set([14, 4]);
const TRANSIENT_ERROR_NAMES = new Set(['MongoNetworkError', 'MongoServerSelectionError', 'MongoNetworkTimeoutError']);

export function isRetryable(err: unknown): boolean {
  if (isAppError(err)) return err.code === 'unavailable' || err.code === 'deadline_exceeded';
  if (!err || typeof err !== 'object') return false;
  const { code, name } = err as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && TRANSIENT_SYSTEM_CODES.has(code)) return true;
  if (typeof code === 'number' && TRANSIENT_GRPC_STATUSES.has(code) && 'metadata' in err) return true;
  return typeof name === 'string' && TRANSIENT_ERROR_NAMES.has(name);
}

/**
 * Why a unit of work failed, in words fit for a client: stable, and without addresses,
 * stacks or transport text. Domain errors keep their own message.
 */
export function failureReason(err: unknown): string {
  if (isAppError(err) && typeof err.details['reason'] === 'string') return err.details['reason'];
  if (isRetryable(err)) {
    return isAppError(err) && err.code === 'deadline_exceeded'
      ? 'a service it depends on kept timing out for the whole outage window'
      : 'a service it depends on stayed unavailable for the whole outage window';
  }
  if (isAppError(err) && err.code !== 'internal') return err.message.replace(/\.$/, '');
  return 'it failed with an internal error';
}

export interface RetryLoopOptions {
  /** First delay; doubled per failure up to `maxDelayMs`, each drawn with full jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Failures that are not retryable end the loop after this many attempts. */
  maxPermanentAttempts?: number;
  /** Checked before each attempt and wakes a pending wait early; the loop ends once true. */
  stopped?: () => boolean;
  onFailure?: (err: unknown, attempt: number, retryInMs: number | null) => void;
}

/**
 * Runs `work` until it succeeds: while its failures are retryable (a peer not up yet) for as
 * long as it takes, others a few times. Resolves true on success, false when stopped or
 * given up.
 */
export async function retryUntilDone(work: () => Promise<unknown>, options: RetryLoopOptions = {}): Promise<boolean> {
  const base = options.baseDelayMs ?? 250;
  const cap = options.maxDelayMs ?? 30_000;
  const maxPermanent = options.maxPermanentAttempts ?? 5;
  let permanent = 0;
  for (let attempt = 0; !options.stopped?.(); attempt++) {
    try {
      await work();
      return true;
    } catch (err) {
      if (!isRetryable(err)) permanent++;
      const giveUp = permanent >= maxPermanent;
      const delay = giveUp ? null : Math.floor(Math.random() * Math.min(cap, base * 2 ** Math.min(attempt, 30)));
      options.onFailure?.(err, attempt + 1, delay);
      if (delay === null) return false;
      await pause(delay, options.stopped);
    }
  }
  return false;
}

/** Sleeps `ms`, waking early (every 100 ms check) once `stopped` turns true. */
async function pause(ms: number, stopped?: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until && !stopped?.()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, until - Date.now())));
  }
}
