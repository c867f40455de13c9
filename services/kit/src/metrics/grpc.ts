import { status as Status, type Metadata, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { grpcServerSpan } from '../tracing/tracing';
import { secondsSince, type Metrics } from './metrics';

/** `OK`, `NOT_FOUND`…: the status names Prometheus users know from other gRPC services. */
export function codeName(code: number | undefined): string {
  return (Status as unknown as Record<number, string>)[code ?? Status.OK] ?? 'UNKNOWN';
}

/** Observer the typed client calls once per finished call. */
export type ClientCallObserver = (method: string, code: number, seconds: number) => void;

export function clientObserver(metrics: Metrics, service: string): ClientCallObserver {
  return (method, code, seconds) => metrics.grpc('client', service, method, codeName(code), seconds);
}

/**
 * Wraps every unary and client-streaming handler of an implementation so each answered
 * call is counted by method and status code and timed, whatever the handler does.
 */
export function instrumentService(
  service: string,
  definition: ServiceDefinition,
  implementation: UntypedServiceImplementation,
  metrics: Metrics,
): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(implementation)) {
    const def = definition[method];
    if (!def || def.responseStream) {
      out[method] = handler;
      continue;
    }
    const unary = handler as (call: unknown, callback: (err: { code?: number } | null, value?: unknown) => void) => void;
    out[method] = ((call: { metadata: Metadata }, callback: (err: { code?: number } | null, value?: unknown) => void) => {
      const started = process.hrtime.bigint();
      grpcServerSpan(def.path, call.metadata, (endSpan) =>
        unary(call, (err, value) => {
          const code = err ? (err.code ?? Status.UNKNOWN) : Status.OK;
          metrics.grpc('server', service, method, codeName(code), secondsSince(started));
          endSpan(code);
          callback(err, value);
        }),
      );
    }) as UntypedServiceImplementation[string];
  }
  return out;
}
