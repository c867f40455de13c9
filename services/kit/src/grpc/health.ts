import {
  status as Status,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { grpc_health_v1 } from '@supply/contracts';

const { HealthCheckResponse_ServingStatus: Serving } = grpc_health_v1;

/** Health service name that answers SERVING while the process runs: a liveness probe that ignores dependencies. */
export const LIVENESS_SERVICE = 'liveness';

/**
 * grpc.health.v1 backed by the module's real readiness check. `''` is the whole server;
 * the module's fully qualified service name reports the same check; `liveness` only
 * says the process answers.
 */
export function healthService(serviceName: string, isReady: () => Promise<boolean>, stopping?: AbortSignal): UntypedServiceImplementation {
  const statusOf = async (service: string) => {
    if (service === LIVENESS_SERVICE) return Serving.SERVING;
    if (service !== '' && service !== serviceName) return undefined;
    if (stopping?.aborted) return Serving.NOT_SERVING;
    return (await isReady().catch(() => false)) ? Serving.SERVING : Serving.NOT_SERVING;
  };
  return {
    check(call: ServerUnaryCall<grpc_health_v1.HealthCheckRequest, unknown>, callback: sendUnaryData<unknown>) {
      statusOf(call.request.service).then((status) => {
        if (status === undefined) callback({ code: Status.NOT_FOUND, details: `unknown service ${call.request.service}` });
        else callback(null, { status });
      });
    },
    watch(call: ServerWritableStream<grpc_health_v1.HealthCheckRequest, unknown>) {
      let last: number | undefined;
      const tick = async () => {
        const status = (await statusOf(call.request.service)) ?? Serving.SERVICE_UNKNOWN;
        if (status !== last) call.write({ status });
        last = status;
      };
      void tick();
      const timer = setInterval(tick, 5_000);
      // An open watch would hold the server's graceful shutdown until it is forced: say NOT_SERVING and end it.
      const end = () => {
        clearInterval(timer);
        void tick().finally(() => call.end());
      };
      if (stopping?.aborted) end();
      else stopping?.addEventListener('abort', end, { once: true });
      call.on('cancelled', () => {
        clearInterval(timer);
        stopping?.removeEventListener('abort', end);
      });
    },
  };
}
