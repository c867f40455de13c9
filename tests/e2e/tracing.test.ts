import assert from 'node:assert/strict';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing, tracingEnabled, type Tracing } from '@supply/kit';
import { api, startSystem, type TestSystem } from '../support/system';
import { busEnv, days, dropBusNamespace, salesRow, waitForJob } from './workflows-support';

describe('tracing: one trace from the gateway through workflows to transactional', function () {
  this.timeout(60_000);
  const exporter = new InMemorySpanExporter();
  const bus = busEnv();
  let tracing: Tracing;
  let sys: TestSystem;
  let token: string;

  before(async () => {
    assert.equal(tracingEnabled(), false, 'off unless started');
    tracing = await startTracing({ serviceName: 'supply-test', exporter });
    sys = await startSystem({ env: bus });
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
  });
  after(async () => {
    await sys?.stop();
    await tracing?.shutdown();
    await dropBusNamespace(bus);
  });

  it('a sync: the HTTP span, the workflows call, the chunk consumer and the transactional calls share one trace id', async () => {
    exporter.reset();
    const res = await api(sys, '/demo/api/v1/workflows/sync-sales', {
      method: 'POST',
      token,
      body: { mode: 'upsert', data: days('2036-05-01', 2).map((d, i) => salesRow(d, i + 1)) },
    });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(sys, 'demo', token, res.body.data[0].job_id);
    assert.equal(job.status, 'succeeded');
    await new Promise((r) => setTimeout(r, 200));

    const spans = exporter.getFinishedSpans();
    const http = spans.find((s) => s.kind === SpanKind.SERVER && s.name === 'POST /:tenant/api/v1/workflows/sync-sales');
    assert.ok(http, spans.map((s) => s.name).join('\n'));
    const traceId = http.spanContext().traceId;
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
    const has = (kind: SpanKind, pattern: RegExp) => inTrace.some((s) => s.kind === kind && pattern.test(s.name));
    const names = inTrace.map((s) => `${SpanKind[s.kind]} ${s.name}`).join('\n');
    assert.ok(has(SpanKind.CLIENT, /^supply\.workflows\.v1\.WorkflowService\/SubmitSync$/), names);
    assert.ok(has(SpanKind.SERVER, /^supply\.workflows\.v1\.WorkflowService\/SubmitSync$/), names);
    assert.ok(has(SpanKind.CONSUMER, /^workflows\.sync-chunks process$/), names);
    assert.ok(has(SpanKind.SERVER, /^supply\.transactional\.v1\.TransactionalService\//), names);
    // Store operations of the services the sync touched, named by database, collection and operation only.
    const stored = inTrace.filter((s) => s.kind === SpanKind.CLIENT && s.attributes['db.operation.name'] !== undefined);
    const databases = new Set(stored.map((s) => s.attributes['db.namespace']));
    assert.ok(databases.has('workflows') && databases.has('transactional'), [...databases].join());
    for (const s of stored) {
      assert.deepEqual(
        Object.keys(s.attributes).sort(),
        ['db.collection.name', 'db.namespace', 'db.operation.name', 'db.system.name'],
        s.name,
      );
      assert.equal(s.name, `${String(s.attributes['db.operation.name'])} ${String(s.attributes['db.collection.name'])}`);
    }
    assert.ok(
      stored.some(
        (s) =>
          s.attributes['db.namespace'] === 'transactional' &&
          s.attributes['db.collection.name'] === 'sales' &&
          s.attributes['db.operation.name'] === 'insertMany',
      ),
      stored.map((s) => s.name).join('\n'),
    );
    // Every part of the job, whichever phase dispatched it, links to the request that created the job.
    const parts = inTrace.filter((s) => s.kind === SpanKind.CONSUMER && s.name === 'workflows.sync-chunks process');
    assert.ok(parts.length >= 2, 'a validate and an apply part at least');
    for (const part of parts) {
      assert.ok(
        part.links.some((l) => l.context.spanId === http.spanContext().spanId && l.context.traceId === traceId),
        `${part.name} links to the job root`,
      );
    }
    // Each part was sent in a producer span of the trace, and that span is its consumer span's parent.
    const byId = new Map(inTrace.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) =>
      byId.get((s as ReadableSpan & { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId ?? '');
    const producers = inTrace.filter((s) => s.kind === SpanKind.PRODUCER && s.name === 'workflows.sync-chunks publish');
    assert.ok(producers.length >= 2, names);
    for (const part of parts) {
      const producer = parentOf(part);
      assert.ok(
        producer && producer.kind === SpanKind.PRODUCER && producer.name === 'workflows.sync-chunks publish',
        `${part.name}'s parent: ${producer ? `${SpanKind[producer.kind]} ${producer.name}` : 'none'}`,
      );
      assert.equal(producer.attributes['messaging.destination.name'], 'workflows.sync-chunks');
    }
    // The first parts are sent by the SubmitSync call: gateway -> workflows -> publish -> consume -> transactional.
    assert.ok(
      producers.some(
        (p) => parentOf(p)?.kind === SpanKind.SERVER && parentOf(p)?.name === 'supply.workflows.v1.WorkflowService/SubmitSync',
      ),
      producers.map((p) => parentOf(p)?.name).join(),
    );
    // The trace ends with its work: background loops the request woke (the embedded bus polls every second) add nothing later.
    const inTraceNow = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    let seen = -1;
    for (let i = 0; i < 8 && inTraceNow().length !== seen; i++) {
      seen = inTraceNow().length;
      await new Promise((r) => setTimeout(r, 1_200));
    }
    assert.equal(
      inTraceNow().length,
      seen,
      `the trace kept growing: ${inTraceNow()
        .slice(-4)
        .map((s) => s.name)
        .join(', ')}`,
    );
    // Parent links hold: each span's parent is in the trace, up to the HTTP span.
    const ids = new Set(inTrace.map((s) => s.spanContext().spanId));
    for (const s of inTrace) {
      const parent = (s as ReadableSpan & { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId;
      if (s !== http) assert.ok(parent && ids.has(parent), `${s.name} has its parent in the trace`);
    }
  });
  it('a forecast run and a plan run: every chunk consumer span links to the POST that created the job', async () => {
    const runs = [
      {
        path: '/demo/api/v1/forecasts/generate',
        body: { item_name: 'SKU-0001', customer_group_name: 'Retail' },
        queue: 'compute.forecast-chunks',
      },
      { path: '/demo/api/v1/supply-plans/generate', body: { mode: 'standard', view_name: 'Default' }, queue: 'compute.supply-plan-chunks' },
    ];
    for (const run of runs) {
      exporter.reset();
      const res = await api(sys, run.path, { method: 'POST', token, body: run.body });
      assert.equal(res.status, 202, res.text);
      const job = await waitForJob(sys, 'demo', token, res.body.data[0].job_id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      await new Promise((r) => setTimeout(r, 200));
      const spans = exporter.getFinishedSpans();
      const http = spans.find((s) => s.kind === SpanKind.SERVER && s.name === `POST /:tenant/api/v1/${run.path.split('/v1/')[1]}`);
      assert.ok(http, spans.map((s) => s.name).join('\n'));
      const parts = spans.filter((s) => s.kind === SpanKind.CONSUMER && s.name === `${run.queue} process`);
      assert.ok(parts.length >= 1, `${run.queue}: ${spans.map((s) => s.name).join('\n')}`);
      for (const part of parts) {
        assert.ok(
          part.links.some((l) => l.context.spanId === http.spanContext().spanId),
          `${part.name} links to the job root`,
        );
      }
    }
  });
});
