import assert from 'node:assert/strict';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import {
  consumeInSpan,
  httpServerSpan,
  injectTraceHeaders,
  jobRootHeaders,
  startTracing,
  storeSpan,
  traceRoot,
  TRACE_ROOT_HEADER,
  type Tracing,
} from './tracing.js';

describe('tracing: job roots and store spans', () => {
  // A tracer's shutdown stops its exporter, so each test gets its own.
  let exporter: InMemorySpanExporter;
  let tracing: Tracing | undefined;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
  });
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
  });

  it('while off, names no root and runs store work without a span', async () => {
    assert.equal(traceRoot(), undefined);
    assert.equal(await storeSpan('lmdb', 'db', 'c', 'find', async () => 7), 7);
    assert.equal(exporter.getFinishedSpans().length, 0);
  });

  it("makes the HTTP request the root: headers sent inside it name it, and a consumer span links to it, also when only a job record's copy travels", async () => {
    tracing = await startTracing({ serviceName: 'test', exporter });
    let sent: Record<string, string> = {};
    let root: string | undefined;
    // A caller cannot name the root of what this request starts.
    const end = httpServerSpan('POST', { [TRACE_ROOT_HEADER]: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` }, () => {
      root = traceRoot();
      sent = injectTraceHeaders({});
    });
    end!('/jobs', 202);
    const http = exporter.getFinishedSpans()[0]!;
    assert.equal(root, `00-${http.spanContext().traceId}-${http.spanContext().spanId}-01`);
    assert.equal(sent[TRACE_ROOT_HEADER], root);
    assert.ok(sent.traceparent);
    await consumeInSpan('q', sent, async () => {
      // The next hop passes the same root on.
      assert.equal(injectTraceHeaders({})[TRACE_ROOT_HEADER], root);
    });
    await consumeInSpan('q', jobRootHeaders(root), async () => undefined);
    const consumers = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CONSUMER);
    assert.equal(consumers.length, 2);
    for (const c of consumers)
      assert.deepEqual(
        c.links.map((l) => l.context.spanId),
        [http.spanContext().spanId],
      );
    assert.equal(consumers[0]!.spanContext().traceId, http.spanContext().traceId);
  });

  it('traces a store operation only inside a trace, with names and no contents', async () => {
    tracing = await startTracing({ serviceName: 'test', exporter });
    await storeSpan('lmdb', 'workflows', 'jobs', 'findById', async () => 1);
    assert.equal(exporter.getFinishedSpans().length, 0, 'a background poll makes no trace of its own');
    await consumeInSpan('q', {}, () => storeSpan('lmdb', 'workflows', 'jobs', 'findById', async () => 1));
    await assert.rejects(
      consumeInSpan('q', {}, () => storeSpan('mongodb', 'workflows', 'jobs', 'insertOne', async () => Promise.reject(new Error('clash')))),
    );
    const stored = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    assert.deepEqual(
      stored.map((s) => [s.name, s.status.code]),
      [
        ['findById jobs', 0],
        ['insertOne jobs', 2],
      ],
    );
    assert.deepEqual(stored[0]!.attributes, {
      'db.system.name': 'lmdb',
      'db.namespace': 'workflows',
      'db.collection.name': 'jobs',
      'db.operation.name': 'findById',
    });
  });
});
