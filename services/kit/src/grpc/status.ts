import { Metadata, status as Status, type ServiceError } from '@grpc/grpc-js';
import { AppError, ERROR_CODES, type ErrorCode } from '../errors';

/** The one table from domain error code to gRPC status. */
export const GRPC_STATUS_OF: Record<ErrorCode, Status> = {
  invalid_argument: Status.INVALID_ARGUMENT,
  invalid_query: Status.INVALID_ARGUMENT,
  unauthenticated: Status.UNAUTHENTICATED,
  permission_denied: Status.PERMISSION_DENIED,
  not_found: Status.NOT_FOUND,
  conflict: Status.ALREADY_EXISTS,
  precondition_failed: Status.FAILED_PRECONDITION,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
  deadline_exceeded: Status.DEADLINE_EXCEEDED,
  gone: Status.FAILED_PRECONDITION,
  internal: Status.INTERNAL,
};

/** For errors that carry no domain code (a peer in another codebase, the transport itself). */
const CODE_OF_STATUS: Partial<Record<Status, ErrorCode>> = {
  [Status.INVALID_ARGUMENT]: 'invalid_argument',
  [Status.UNAUTHENTICATED]: 'unauthenticated',
  [Status.PERMISSION_DENIED]: 'permission_denied',
  [Status.NOT_FOUND]: 'not_found',
  [Status.ALREADY_EXISTS]: 'conflict',
  [Status.ABORTED]: 'conflict',
  [Status.FAILED_PRECONDITION]: 'precondition_failed',
  [Status.RESOURCE_EXHAUSTED]: 'resource_exhausted',
  [Status.UNAVAILABLE]: 'unavailable',
  [Status.DEADLINE_EXCEEDED]: 'deadline_exceeded',
  [Status.CANCELLED]: 'unavailable',
};

/** Trailing metadata key that carries the domain code and details across the hop. */
const DETAILS_KEY = 'x-app-error-bin';

export function toServiceError(err: AppError): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set(DETAILS_KEY, Buffer.from(JSON.stringify({ code: err.code, details: err.details })));
  return { code: GRPC_STATUS_OF[err.code], details: err.message, metadata };
}

export function fromServiceError(err: ServiceError): AppError {
  const raw = err.metadata?.get(DETAILS_KEY)[0];
  if (raw) {
    try {
      const parsed = JSON.parse(Buffer.from(raw as Buffer).toString('utf8')) as { code: ErrorCode; details: Record<string, unknown> };
      if ((ERROR_CODES as readonly string[]).includes(parsed.code)) return new AppError(parsed.code, err.details, parsed.details);
    } catch {
      // fall through to the status-based mapping
    }
  }
  const code = CODE_OF_STATUS[err.code as Status] ?? 'internal';
  // The library's text names addresses and causes (`connect ECONNREFUSED 127.0.0.1:38453`):
  // callers and clients see a stable message; `upstream` (and `cause`) keep the text for logs only.
  const error = new AppError(code, TRANSPORT_MESSAGE[code] ?? TRANSPORT_MESSAGE.internal!, {
    grpcStatus: err.code,
    transport: true,
    upstream: err.details ?? '',
  });
  return Object.assign(error, { cause: err.details });
}

/** Public messages of failures that came without a domain error (the connection, or a peer outside this codebase). */
export const TRANSPORT_MESSAGE: Partial<Record<ErrorCode, string>> = {
  unavailable: 'A service is unavailable. Try again in a moment.',
  deadline_exceeded: 'A service did not answer in time. Try again in a moment.',
  internal: 'Upstream service failed.',
  invalid_argument: 'An upstream service refused the request as invalid.',
  unauthenticated: 'An upstream service refused the request as unauthenticated.',
  permission_denied: 'An upstream service refused the request as not permitted.',
  not_found: 'An upstream service found no such record.',
  conflict: 'An upstream service refused the request as conflicting.',
  precondition_failed: 'An upstream service refused the request in its current state.',
  resource_exhausted: 'An upstream service is over its limits; try again later.',
};
