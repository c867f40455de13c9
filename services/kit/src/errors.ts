/** Every domain failure carries one code from this list; gRPC and HTTP map codes in one table each. */
export const ERROR_CODES = [
  'invalid_argument', // request fields fail validation (field errors attached)
  'invalid_query', // unknown filter/sort/include names
  'unauthenticated',
  'permission_denied',
  'not_found',
  'conflict', // unique key taken, replace already running, idempotency key in flight
  'precondition_failed',
  'resource_exhausted', // rate limit, credits, concurrent jobs
  'unavailable', // a dependency cannot take work now
  'deadline_exceeded',
  'gone',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Field path (e.g. `data.3.quantity`) to messages, as the 422 body shows them. */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Extra structured facts (field errors, problem slug, retry-after) that survive the gRPC hop. */
  readonly details: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export class ValidationError extends AppError {
  constructor(
    readonly fields: FieldErrors,
    message?: string,
  ) {
    super('invalid_argument', message ?? summarizeFieldErrors(fields), { fields });
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('conflict', message, details);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found.') {
    super('not_found', message);
  }
}

/** Laravel's summary line: the first message, then "(and N more errors)". */
export function summarizeFieldErrors(fields: FieldErrors): string {
  const all = Object.values(fields).flat();
  if (all.length === 0) return 'The given data was invalid.';
  const rest = all.length - 1;
  return rest > 0 ? `${all[0]} (and ${rest} more ${rest === 1 ? 'error' : 'errors'})` : all[0]!;
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/**
 * What a job message may say about a failure: a domain error's own message (transport
 * failures already carry a stable one), else a fixed sentence; the cause belongs in the log.
 */
export function publicReason(err: unknown): string {
  if (isAppError(err) && err.code !== 'internal') return err.message;
  return 'an internal error (the service log has the cause)';
}
