import type { ErrorCode } from '@supply/kit';

/** Problem types the gateway serves at `/problems/<slug>`, each with its HTTP status and title. */
export const PROBLEMS = {
  'bad-request': { status: 400, title: 'Bad request' },
  'invalid-query': { status: 400, title: 'Invalid query parameter' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  'credits-exhausted': { status: 402, title: 'Credits exhausted' },
  'insufficient-scope': { status: 403, title: 'Token scope does not allow this request' },
  'insufficient-permission': { status: 403, title: "The token creator's permissions do not allow this request" },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'not-acceptable': { status: 406, title: 'Not acceptable' },
  conflict: { status: 409, title: 'Conflict' },
  gone: { status: 410, title: 'Gone' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'headers-too-large': { status: 431, title: 'Request header fields too large' },
  'validation-failed': { status: 422, title: 'Validation failed' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'upstream-timeout': { status: 504, title: 'Upstream timeout' },
} as const;
export type ProblemSlug = keyof typeof PROBLEMS;

/**
 * The one table from domain error code (which the gRPC client already derived from the
 * gRPC status) to the problem an HTTP client sees.
 */
export const PROBLEM_OF_CODE: Record<ErrorCode, ProblemSlug> = {
  invalid_argument: 'validation-failed',
  invalid_query: 'invalid-query',
  unauthenticated: 'unauthenticated',
  permission_denied: 'forbidden',
  not_found: 'not-found',
  conflict: 'conflict',
  precondition_failed: 'conflict',
  resource_exhausted: 'rate-limited',
  unavailable: 'service-unavailable',
  deadline_exceeded: 'upstream-timeout',
  gone: 'gone',
  internal: 'internal-error',
};
