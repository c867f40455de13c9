import { Client, credentials, type CallOptions, type ServiceError } from '@grpc/grpc-js';
import { currentContext, type RequestContext } from '../context';
import { contextToMetadata } from './metadata';
import { fromServiceError } from './status';

interface MethodDefinitionLike {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize: (value: never) => Buffer;
  responseDeserialize: (bytes: Buffer) => unknown;
}

export interface CallOverrides {
  /** Defaults to the client's deadline. */
  deadlineMs?: number;
  /** Defaults to the ambient request context (AsyncLocalStorage). */
  context?: RequestContext;
}

/** A promise method per unary RPC of the definition, typed from it. */
export type PromiseClient<D> = {
  [K in keyof D]: D[K] extends {
    requestSerialize: (value: infer Req) => Buffer;
    responseDeserialize: (bytes: Buffer) => infer Res;
  }
    ? (request: Req, overrides?: CallOverrides) => Promise<Res>
    : never;
} & { close(): void; readonly address: string };

/**
 * A typed client for a service definition. Every call carries the service credential,
 * the ambient request context and a deadline; failures come back as AppError.
 */
export function createClient<D extends Record<string, MethodDefinitionLike>>(
  definition: D,
  address: string,
  opts: { credential: string; deadlineMs: number },
): PromiseClient<D> {
  const client = new Client(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
  });
  const out: Record<string, unknown> = {
    close: () => client.close(),
    address,
  };
  for (const [name, method] of Object.entries(definition)) {
    if (method.requestStream || method.responseStream) continue;
    out[name] = (request: unknown, overrides: CallOverrides = {}) => {
      const ctx = overrides.context ?? currentContext();
      const ms = overrides.deadlineMs ?? opts.deadlineMs;
      // The caller's own deadline caps ours: no point working past it.
      const deadline = Math.min(Date.now() + ms, ctx?.deadline ?? Infinity);
      const callOptions: CallOptions = { deadline };
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize as (v: unknown) => Buffer,
          method.responseDeserialize,
          request,
          contextToMetadata(opts.credential, ctx),
          callOptions,
          (err: ServiceError | null, response?: unknown) => (err ? reject(fromServiceError(err)) : resolve(response)),
        );
      });
    };
  }
  return out as PromiseClient<D>;
}
