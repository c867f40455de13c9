/**
 * OpenTelemetry traces, off unless started: OTEL_EXPORTER_OTLP_ENDPOINT (OTLP over HTTP)
 * or a test's exporter. While off, every hook below is one boolean check. Context travels
 * as W3C `traceparent` in HTTP headers, gRPC metadata and bus message headers.
 */
import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Metadata } from '@grpc/grpc-js';

let enabled = false;

export function tracingEnabled(): boolean {
  return enabled;
}

const tracer = () => trace.getTracer('supply-planning');

export interface Tracing {
  /** Flushes what is buffered and turns tracing off. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for this process: spans go to `exporter` as they end (tests), or in
 * batches to the OTLP/HTTP `endpoint` (its `/v1/traces`).
 */
export async function startTracing(opts: { serviceName: string; endpoint?: string; exporter?: SpanExporter }): Promise<Tracing> {
  // The SDK loads only when tracing is on: it costs a process that never traces ~300 ms of start-up.
  const [
    { AsyncLocalStorageContextManager },
    { CompositePropagator, W3CTraceContextPropagator },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor },
  ] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const processor = opts.exporter
    ? new SimpleSpanProcessor(opts.exporter)
    : new BatchSpanProcessor(new OTLPTraceExporter({ url: `${(opts.endpoint ?? '').replace(/\/+$/, '')}/v1/traces` }));
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), rootPropagator] }));
  trace.setGlobalTracerProvider(provider);
  enabled = true;
  return {
    async shutdown() {
      enabled = false;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

const headerSetter: TextMapSetter<Record<string, string>> = { set: (carrier, key, value) => void (carrier[key] = value) };
const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const metadataSetter: TextMapSetter<Metadata> = { set: (md, key, value) => md.set(key, value) };
const metadataGetter: TextMapGetter<Metadata> = {
  keys: (md) => Object.keys(md.getMap()),
  get: (md, key) => {
    const v = md.get(key)[0];
    return v === undefined ? undefined : String(v);
  },
};

/**
 * The span of the HTTP request a piece of work started from (a job's root): it travels
 * beside `traceparent` in gRPC metadata and bus message headers, so a consumer span links
 * to it however many hops, phases or redeliveries later it runs.
 */
export const TRACE_ROOT_HEADER = 'supply-trace-root';
const ROOT_KEY = createContextKey('supply-trace-root');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function formatRoot(root: SpanContext): string {
  return `00-${root.traceId}-${root.spanId}-0${(root.traceFlags & 1).toString(16)}`;
}

function parseRoot(value: unknown): SpanContext | undefined {
  const m = typeof value === 'string' ? TRACEPARENT.exec(value) : null;
  return m ? { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 1, isRemote: true } : undefined;
}

const rootPropagator = {
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter) {
    const root = ctx.getValue(ROOT_KEY) as SpanContext | undefined;
    if (root) setter.set(carrier, TRACE_ROOT_HEADER, formatRoot(root));
  },
  extract(ctx: Context, carrier: unknown, getter: TextMapGetter) {
    const raw = getter.get(carrier, TRACE_ROOT_HEADER);
    const root = parseRoot(Array.isArray(raw) ? raw[0] : raw);
    return root ? ctx.setValue(ROOT_KEY, root) : ctx;
  },
  fields: () => [TRACE_ROOT_HEADER],
};

/** The job root of the active context as a `traceparent` value, to keep with work that outlives the request; undefined when tracing is off. */
export function traceRoot(): string | undefined {
  if (!enabled) return undefined;
  const root = context.active().getValue(ROOT_KEY) as SpanContext | undefined;
  return root ? formatRoot(root) : undefined;
}

/** Headers that make a message's consumer span link to the job root kept as `root` (see traceRoot), for work sent outside the request. */
export function jobRootHeaders(root: string | undefined): Record<string, string> | undefined {
  return root ? { [TRACE_ROOT_HEADER]: root } : undefined;
}

function rootLinks(ctx: Context): Link[] | undefined {
  const root = ctx.getValue(ROOT_KEY) as SpanContext | undefined;
  return root ? [{ context: root, attributes: { 'supply.link': 'job_root' } }] : undefined;
}

function finish(span: Span, error: boolean, attributes: Attributes): void {
  span.setAttributes(attributes);
  if (error) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** The server span of an HTTP request, continuing the caller's `traceparent`; runs `next` inside it. */
export function httpServerSpan(
  method: string,
  headers: Record<string, string | string[] | undefined>,
  next: () => void,
): ((route: string, status: number) => void) | undefined {
  if (!enabled) {
    next();
    return undefined;
  }
  // A caller's trace is continued, but the root it may name is not ours: this request is the root of what it starts.
  const parent = propagation.extract(ROOT_CONTEXT, headers, headerGetter).deleteValue(ROOT_KEY);
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  context.with(trace.setSpan(parent, span).setValue(ROOT_KEY, span.spanContext()), next);
  return (route, status) => {
    span.updateName(`${method} ${route}`);
    finish(span, status >= 500, { 'http.route': route, 'http.response.status_code': status });
  };
}

/** A client span for a gRPC call (`/package.Service/Method`), its context injected into the call's metadata. */
export function grpcClientSpan(path: string, metadata: Metadata): ((code: number) => void) | undefined {
  if (!enabled) return undefined;
  const span = tracer().startSpan(path.slice(1), { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc' } });
  propagation.inject(trace.setSpan(context.active(), span), metadata, metadataSetter);
  return (code) => finish(span, code !== 0, { 'rpc.grpc.status_code': code });
}

/** The server span of a gRPC call, child of the caller's span; runs `handle` inside it. */
export function grpcServerSpan(path: string, metadata: Metadata, handle: (end: (code: number) => void) => void): void {
  if (!enabled) {
    handle(() => undefined);
    return;
  }
  const parent = propagation.extract(ROOT_CONTEXT, metadata, metadataGetter);
  const span = tracer().startSpan(path.slice(1), { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc' } }, parent);
  context.with(trace.setSpan(parent, span), () => handle((code) => finish(span, code !== 0, { 'rpc.grpc.status_code': code })));
}

/** Runs `fn` in no trace: background loops woken by a request must not carry on in its trace. */
export function outsideTrace<T>(fn: () => T): T {
  return enabled ? context.with(ROOT_CONTEXT, fn) : fn();
}

/** Adds the active trace context to a message's headers (a no-op with no active span). */
export function injectTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (enabled) propagation.inject(context.active(), headers, headerSetter);
  return headers;
}

/**
 * A producer span around one message sent to a queue or topic (inside a trace only, as
 * store spans: a sweep's or poll's sends start none), named `<destination> publish` (a
 * work-queue `send` or a topic `publish`, as `messaging.operation.type`). `send`
 * gets the headers that carry its context (and the job root) to the consumer, so the
 * consumer span is its child; with no trace around, just the job root if one is active.
 */
export async function produceInSpan<T>(
  destination: string,
  operation: 'send' | 'publish',
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const parent = context.active();
  if (!enabled || !trace.getSpan(parent)) return send(injectTraceHeaders({}));
  const span = tracer().startSpan(
    `${destination} publish`,
    { kind: SpanKind.PRODUCER, attributes: { 'messaging.destination.name': destination, 'messaging.operation.type': operation } },
    parent,
  );
  const ctx = trace.setSpan(parent, span);
  const headers: Record<string, string> = {};
  propagation.inject(ctx, headers, headerSetter);
  try {
    const out = await context.with(ctx, () => send(headers));
    finish(span, false, {});
    return out;
  } catch (err) {
    finish(span, true, {});
    throw err;
  }
}

/** Runs a consumer's handler in a span that continues the sender's trace and links to its job root. */
export async function consumeInSpan<T>(queue: string, headers: Record<string, string> | undefined, work: () => Promise<T>): Promise<T> {
  if (!enabled) return work();
  const parent: Context = propagation.extract(ROOT_CONTEXT, headers ?? {}, headerGetter);
  const span = tracer().startSpan(
    `${queue} process`,
    { kind: SpanKind.CONSUMER, attributes: { 'messaging.destination.name': queue }, links: rootLinks(parent) },
    parent,
  );
  try {
    const out = await context.with(trace.setSpan(parent, span), work);
    finish(span, false, {});
    return out;
  } catch (err) {
    finish(span, true, {});
    throw err;
  }
}

function storeAttributes(system: string, database: string, collection: string, operation: string): Attributes {
  return { 'db.system.name': system, 'db.namespace': database, 'db.collection.name': collection, 'db.operation.name': operation };
}

/** A client span for one store operation, only inside a trace (background polls stay out); names, never contents. */
export async function storeSpan<T>(
  system: string,
  database: string,
  collection: string,
  operation: string,
  work: () => Promise<T>,
): Promise<T> {
  const parent = context.active();
  if (!enabled || !trace.getSpan(parent)) return work();
  const span = tracer().startSpan(
    `${operation} ${collection}`,
    { kind: SpanKind.CLIENT, attributes: storeAttributes(system, database, collection, operation) },
    parent,
  );
  try {
    const out = await context.with(trace.setSpan(parent, span), work);
    finish(span, false, {});
    return out;
  } catch (err) {
    finish(span, true, {});
    throw err;
  }
}

/** A store span over a streamed read, from the first pull to the last (or to the reader stopping). */
export function storeSpanIterable<T>(
  system: string,
  database: string,
  collection: string,
  operation: string,
  open: () => AsyncIterable<T>,
): AsyncIterable<T> {
  const parent = context.active();
  if (!enabled || !trace.getSpan(parent)) return open();
  return {
    async *[Symbol.asyncIterator]() {
      const span = tracer().startSpan(
        `${operation} ${collection}`,
        { kind: SpanKind.CLIENT, attributes: storeAttributes(system, database, collection, operation) },
        parent,
      );
      let failed = false;
      try {
        yield* open();
      } catch (err) {
        failed = true;
        throw err;
      } finally {
        finish(span, failed, {});
      }
    },
  };
}
