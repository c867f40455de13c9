import {
  Client,
  connectivityState,
  status as Status,
  type CallOptions,
  type ClientWritableStream,
  type Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import { currentContext, type RequestContext } from '../context';
import { contextToMetadata } from './metadata';
import { fromServiceError, GRPC_STATUS_OF } from './status';
import { channelSetup, PLAINTEXT, type GrpcTransport } from './transport';
import { isAppError } from '../errors';
import type { ClientCallObserver } from '../metrics/grpc';
import { grpcClientSpan } from '../tracing/tracing';

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
  opts: { credential: string; deadlineMs: number; transport?: GrpcTransport; observe?: ClientCallObserver },
): PromiseClient<D> {
  const channel = channelSetup(opts.transport ?? PLAINTEXT);
  const client = new Client(address, channel.credentials, {
    ...channel.options,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    // Nothing reads channelz; tracking it costs every call a little.
    'grpc.enable_channelz': 0,
  });
  const observe = opts.observe;
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
      out[name] = (overrides: CallOverrides = {}) => {
        const setup = callSetup(overrides);
        const endSpan = grpcClientSpan(method.path, setup.metadata);
        const call = openClientStream(client, method, setup);
        if (observe || endSpan) observeCall(name, call.response, observe, endSpan);
        return call;
      };
      continue;
    }
    out[name] = (request: unknown, overrides: CallOverrides = {}) => {
      const { metadata, callOptions } = callSetup(overrides);
      const started = observe ? process.hrtime.bigint() : 0n;
      const endSpan = grpcClientSpan(method.path, metadata);
      const attempt = () =>
        new Promise<unknown>((resolve, reject) => {
          client.makeUnaryRequest(
            method.path,
            method.requestSerialize as (v: unknown) => Buffer,
            method.responseDeserialize,
            request,
            metadata,
            callOptions,
            (err: ServiceError | null, response?: unknown) => (err ? reject(err) : resolve(response)),
          );
        });
      const settle = (code: number) => {
        observe?.(name, code, Number(process.hrtime.bigint() - started) / 1e9);
        endSpan?.(code);
      };
      return attempt()
        .catch(async (err: ServiceError) => {
          // A call that found no connection never reached the peer, so it is safe to send again once the
          // channel is back: a peer restarting (or between reconnect attempts) is not an outage yet.
          if (!neverSent(err) || !(await channelReady(client, Math.min(callOptions.deadline, Date.now() + RECONNECT_WAIT_MS)))) throw err;
          return attempt();
        })
        .then(
          (response) => {
            settle(0);
            return response;
          },
          (err: ServiceError) => {
            settle(err.code);
            throw fromServiceError(err);
          },
        );
    };
  }
  return out as PromiseClient<D>;
}

/** How long a call that found no connection waits for its peer to come back before it fails. */
const RECONNECT_WAIT_MS = 3_000;

/** grpc-js fails a call at pick time, before anything is sent, with this text when the channel has no connection. */
const neverSent = (err: ServiceError) => err.code === Status.UNAVAILABLE && /No connection established/.test(err.details ?? '');

function channelReady(client: Client, deadline: number): Promise<boolean> {
  if (deadline <= Date.now()) return Promise.resolve(false);
  return new Promise((resolve) => client.waitForReady(deadline, (error) => resolve(!error)));
}

function observeCall(method: string, response: Promise<unknown>, observe?: ClientCallObserver, endSpan?: (code: number) => void): void {
  const started = process.hrtime.bigint();
  const settle = (code: number) => {
    observe?.(method, code, Number(process.hrtime.bigint() - started) / 1e9);
    endSpan?.(code);
  };
  response.then(
    () => settle(0),
    // The stream's failure arrives as an AppError; its code maps back to the status the callee sent.
    (err: unknown) => settle(isAppError(err) ? GRPC_STATUS_OF[err.code] : 2),
  );
}

function openClientStream(
  client: Client,
  method: MethodDefinitionLike,
  setup: { metadata: Metadata; callOptions: CallOptions },
): ClientStreamCall<unknown, unknown> {
  let resolveResponse!: (value: unknown) => void;
  let rejectResponse!: (err: unknown) => void;
  const response = new Promise<unknown>((resolve, reject) => {
    resolveResponse = resolve;
    rejectResponse = reject;
  });
  // Callers await `response` through end(); an early failure must not go unhandled meanwhile.
  response.catch(() => undefined);
  const open = (): ClientWritableStream<unknown> => {
    const call = client.makeClientStreamRequest(
      method.path,
      method.requestSerialize as (v: unknown) => Buffer,
      method.responseDeserialize,
      setup.metadata,
      setup.callOptions,
      (err: ServiceError | null, res?: unknown) => (err ? rejectResponse(fromServiceError(err)) : resolveResponse(res)),
    );
    return call;
  };
  // A stream that finds no connection fails before anything is sent, as a unary call does; give a
  // peer that is restarting (or a channel between reconnect attempts) the same short wait first.
  const ready = client.getChannel().getConnectivityState(true) === connectivityState.READY;
  const opened: Promise<ClientWritableStream<unknown>> = ready
    ? Promise.resolve(open())
    : channelReady(client, Math.min(Number(setup.callOptions.deadline), Date.now() + RECONNECT_WAIT_MS)).then(open);
  let settled = false;
  response.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    response,
    write(message) {
      return opened.then(
        (call) =>
          new Promise<void>((resolve, reject) => {
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
          }),
      );
    },
    end() {
      void opened.then((call) => call.end());
      return response;
    },
    cancel() {
      void opened.then((call) => call.cancel());
    },
  };
}
