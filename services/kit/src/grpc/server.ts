import { hash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  Server,
  status as Status,
  type sendUnaryData,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { AppError, isAppError } from '../errors';
import { runWithContext, type RequestContext } from '../context';
import type { Logger } from '../log';
import { MD, metadataToContext } from './metadata';
import { toServiceError } from './status';
import { PLAINTEXT, serverCredentials, type GrpcTransport } from './transport';

/** What a handler sees besides its request: who asked, and a signal that fires when the caller gives up. */
export interface CallContext extends RequestContext {
  signal: AbortSignal;
  logger: Logger;
  /** The tenant, required: a handler that needs one calls this and gets UNAUTHENTICATED when it is absent. */
  requireTenant(): string;
}

export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;
/** A client-streaming RPC: the requests arrive in order as an async iterable (the caller's pace is held to ours). */
export type ClientStreamHandler<Req, Res> = (requests: AsyncIterable<Req>, ctx: CallContext) => Promise<Res>;

type DefinitionOf<D> = {
  [K in keyof D]: D[K] extends {
    requestStream: infer Streaming;
    requestDeserialize: (b: Buffer) => infer Req;
    responseSerialize: (v: infer Res) => Buffer;
  }
    ? Streaming extends true
      ? ClientStreamHandler<Req, Res>
      : UnaryHandler<Req, Res>
    : never;
};

/** Handlers for every method of a ts-proto service definition, typed from the definition. */
export type ServiceHandlers<D> = DefinitionOf<D>;

const digestOf = (value: string): Buffer => hash('sha256', value, 'buffer');

const elapsedMsSince = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e6;

/** Compares a presented secret with the expected one's digest, taken once per service. */
function sameSecret(presented: string, expectedDigest: Buffer): boolean {
  // Hash first so lengths match and comparison time does not depend on the secret.
  return timingSafeEqual(digestOf(presented), expectedDigest);
}

/**
 * Adapts `async (request, ctx) => response` handlers to grpc-js: checks the service
 * credential, restores the caller's context, honours the deadline, maps errors.
 */
export function adaptService<D extends ServiceDefinition>(
  definition: D,
  handlers: ServiceHandlers<D>,
  opts: { credential: string; logger: Logger },
): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  const credentialDigest = digestOf(opts.credential);
  for (const method of Object.keys(definition)) {
    const handler = (handlers as Record<string, UnaryHandler<unknown, unknown>>)[method];
    if (!handler) throw new Error(`no handler for ${definition[method]!.path}`);
    const streaming = definition[method]!.requestStream;
    impl[method] = (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const presented = call.metadata.get(MD.credential)[0];
      if (typeof presented !== 'string' || !sameSecret(presented, credentialDigest)) {
        callback({ code: Status.UNAUTHENTICATED, details: 'missing or invalid service credential' });
        return;
      }
      const base = metadataToContext(call.metadata, randomUUID);
      const deadline = call.getDeadline();
      const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number(deadline);
      // The signal, and the timer that aborts it at the deadline, are made only for a handler that asks for them.
      let controller: AbortController | undefined;
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      let cancelled = false;
      // grpc-js also emits 'cancelled' once a finished call is torn down; only an unfinished one is aborted.
      call.on('cancelled', () => {
        if (settled) return;
        cancelled = true;
        controller?.abort();
      });
      const ctx: CallContext = {
        requestId: base.requestId,
        tenant: base.tenant,
        principal: base.principal,
        deadline: Number.isFinite(deadlineMs) ? deadlineMs : undefined,
        get signal() {
          if (!controller) {
            controller = new AbortController();
            if (cancelled) controller.abort();
            else if (!settled && Number.isFinite(deadlineMs) && deadlineMs > 0) {
              const left = deadlineMs - Date.now();
              if (left <= 0) controller.abort();
              else timer = setTimeout(() => controller!.abort(), left);
            }
          }
          return controller.signal;
        },
        logger: opts.logger,
        requireTenant() {
          if (!base.tenant) throw new AppError('unauthenticated', 'this call needs x-tenant metadata');
          return base.tenant;
        },
      };
      const debug = opts.logger.isLevelEnabled('debug');
      const started = debug ? process.hrtime.bigint() : 0n;
      // grpc-js hands a client-streaming handler a ServerReadableStream, which is async iterable.
      const input = streaming ? (call as unknown as ServerReadableStream<unknown, unknown>) : call.request;
      runWithContext(ctx, () => handler(input, ctx)).then(
        (response) => {
          settled = true;
          if (timer) clearTimeout(timer);
          if (debug) runWithContext(ctx, () => opts.logger.debug({ rpc: method, ms: elapsedMsSince(started) }, 'rpc ok'));
          callback(null, response);
        },
        (err: unknown) => {
          settled = true;
          if (timer) clearTimeout(timer);
          if (debug) {
            runWithContext(ctx, () =>
              opts.logger.debug({ rpc: method, ms: elapsedMsSince(started), code: isAppError(err) ? err.code : 'internal' }, 'rpc failed'),
            );
          }
          if (isAppError(err)) {
            if (err.code === 'internal') opts.logger.error({ err, method }, 'handler failed');
            callback(toServiceError(err));
          } else {
            opts.logger.error({ err, method }, 'handler failed');
            callback({ code: Status.INTERNAL, details: 'internal error' });
          }
        },
      );
    };
  }
  return impl;
}

export async function bindServer(server: Server, host: string, port: number, transport: GrpcTransport = PLAINTEXT): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, serverCredentials(transport), (err, bound) => (err ? reject(err) : resolve(bound)));
  });
}

/** Stops accepting calls, lets in-flight ones finish, and forces after `timeoutMs`. */
export async function drainServer(server: Server, timeoutMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, timeoutMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
