import { Client, credentials, type CallOptions, type ClientWritableStream, type Metadata, type ServiceError } from '@grpc/grpc-js';
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

/** One client-streaming call: write requests with backpressure, then end and take the response. */
export interface ClientStreamCall<Req, Res> {
  /** Sends one message; resolves once the transport can take more (the callee reads at its pace). */
  write(message: Req): Promise<void>;
  /** Ends the request stream and resolves with the response (or rejects with its AppError). */
  end(): Promise<Res>;
  /** Abandons the call; the callee sees it cancelled. The response promise rejects. */
  cancel(): void;
  /** Settles when the callee answers, which may be before end() when it fails early. */
  readonly response: Promise<Res>;
}

/** A promise method per unary RPC and a stream opener per client-streaming RPC, typed from the definition. */
export type PromiseClient<D> = {
  [K in keyof D]: D[K] extends {
    requestStream: infer Streaming;
    requestSerialize: (value: infer Req) => Buffer;
    responseDeserialize: (bytes: Buffer) => infer Res;
  }
    ? Streaming extends true
      ? (overrides?: CallOverrides) => ClientStreamCall<Req, Res>
      : (request: Req, overrides?: CallOverrides) => Promise<Res>
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
    // Nothing reads channelz; tracking it costs every call a little.
    'grpc.enable_channelz': 0,
  });
  const out: Record<string, unknown> = {
    close: () => client.close(),
    address,
  };
  const callSetup = (overrides: CallOverrides) => {
    const ctx = overrides.context ?? currentContext();
    const ms = overrides.deadlineMs ?? opts.deadlineMs;
    // The caller's own deadline caps ours: no point working past it.
    const deadline = Math.min(Date.now() + ms, ctx?.deadline ?? Infinity);
    return { metadata: contextToMetadata(opts.credential, ctx), callOptions: { deadline } satisfies CallOptions };
  };
  for (const [name, method] of Object.entries(definition)) {
    if (method.responseStream) continue;
    if (method.requestStream) {
      out[name] = (overrides: CallOverrides = {}) => openClientStream(client, method, callSetup(overrides));
      continue;
    }
    out[name] = (request: unknown, overrides: CallOverrides = {}) => {
      const { metadata, callOptions } = callSetup(overrides);
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize as (v: unknown) => Buffer,
          method.responseDeserialize,
          request,
          metadata,
          callOptions,
          (err: ServiceError | null, response?: unknown) => (err ? reject(fromServiceError(err)) : resolve(response)),
        );
      });
    };
  }
  return out as PromiseClient<D>;
}

function openClientStream(
  client: Client,
  method: MethodDefinitionLike,
  setup: { metadata: Metadata; callOptions: CallOptions },
): ClientStreamCall<unknown, unknown> {
  let call!: ClientWritableStream<unknown>;
  const response = new Promise<unknown>((resolve, reject) => {
    call = client.makeClientStreamRequest(
      method.path,
      method.requestSerialize as (v: unknown) => Buffer,
      method.responseDeserialize,
      setup.metadata,
      setup.callOptions,
      (err: ServiceError | null, res?: unknown) => (err ? reject(fromServiceError(err)) : resolve(res)),
    );
  });
  // Callers await `response` through end(); an early failure must not go unhandled meanwhile.
  response.catch(() => undefined);
  let settled = false;
  response.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    response,
    write(message) {
      return new Promise<void>((resolve, reject) => {
        // A callee that already answered takes no more; a failure surfaces here and at end().
        if (settled) return void response.then(() => resolve(), reject);
        if (call.write(message)) return resolve();
        const done = (err?: unknown) => {
          call.off('drain', onDrain);
          if (err) reject(err);
          else resolve();
        };
        const onDrain = () => done();
        call.once('drain', onDrain);
        response.then(() => done(), done);
      });
    },
    end() {
      call.end();
      return response;
    },
    cancel() {
      call.cancel();
    },
  };
}
