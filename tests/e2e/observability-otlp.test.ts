// The OTLP export path of the compiled server (`node dist/main.js`, as `npm start` and the image
// run it): with OTEL_EXPORTER_OTLP_ENDPOINT set, the spans of a request reach a collector's
// POST /v1/traces, in the trace the client's traceparent named.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients, loadConfig } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { buildOnce, startNode, waitFor, type NodeProc } from '../support/processes';

interface Received {
  method: string;
  url: string;
  contentType: string;
  body: Buffer;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}

/** The spans and service names of an OTLP/JSON ExportTraceServiceRequest. */
function decode(body: Buffer): Array<OtlpSpan & { service: unknown }> {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans: Array<{
      resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
      scopeSpans: Array<{ spans: OtlpSpan[] }>;
    }>;
  };
  return request.resourceSpans.flatMap((r) => {
    const service = r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
    return r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, service })));
  });
}

describe('traces over OTLP/HTTP from the compiled server', function () {
  this.timeout(120_000);
  const received: Received[] = [];
  let collector: Server;
  let proc: NodeProc | undefined;
  let dir: string;
  let api: string;
  let base: number;

  before(async () => {
    buildOnce();
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          contentType: req.headers['content-type'] ?? '',
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as { port: number }).port}`;
    dir = mkdtempSync(join(tmpdir(), 'supply-otlp-'));
    base = await freePortRange(6);
    api = `http://127.0.0.1:${base + 5}`;
    proc = startNode([], {
      PORT: String(base + 5),
      GRPC_BASE_PORT: String(base),
      METRICS_PORT: '0',
      DATA_DIR: dir,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    });
    await waitFor(`${api}/readyz`, 60_000);
  });
  after(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    await new Promise((resolve) => collector?.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("posts the request's spans to <endpoint>/v1/traces as OTLP/JSON, in the client's trace", async () => {
    const clients = createClients(loadConfig({ target: 'all', GRPC_BASE_PORT: base, DATA_DIR: dir }, {}));
    const token = await clients.tokens
      .createToken(
        { user_email: 'planner@demo.test', name: 'otlp', scopes: ['*'], expires_at: '' },
        { context: { requestId: 'otlp-setup', tenant: 'demo' } },
      )
      .finally(() => clients.close());
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(`${api}/demo/api/v1/items?per_page=2`, {
      headers: {
        Accept: 'application/json',
        Authorization: `Bearer ${token.plain_text_token}`,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
    });
    assert.equal(res.status, 200, await res.text());
    // The batch processor exports every few seconds while the process runs (no shutdown needed).
    const inTrace = () =>
      received
        .flatMap((r) => (r.url === '/v1/traces' && r.contentType.startsWith('application/json') ? decode(r.body) : []))
        .filter((s) => s.traceId === traceId);
    for (let i = 0; i < 300 && !inTrace().some((s) => s.kind === 3 && s.name.startsWith('supply.reference.v1.')); i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(received.length > 0, 'the collector got nothing');
    for (const r of received) {
      assert.equal(`${r.method} ${r.url}`, 'POST /v1/traces');
      assert.match(r.contentType, /^application\/json/, 'OTLP/JSON, as the exporter sends it');
      assert.ok(r.body.length > 0, 'a body');
    }
    const spans = inTrace();
    const names = spans.map((s) => `${s.kind} ${s.name}`).join('\n');
    // Span kinds in OTLP: 2 SERVER, 3 CLIENT.
    const http = spans.find((s) => s.kind === 2 && s.name === 'GET /:tenant/api/v1/items');
    assert.ok(http, names);
    assert.equal(http.service, 'supply-planning-all');
    const call = spans.find((s) => s.kind === 3 && s.name.startsWith('supply.reference.v1.'));
    assert.ok(call, names);
    assert.ok(
      spans.some((s) => s.kind === 2 && s.name === call.name && s.parentSpanId === call.spanId),
      `the reference service's side of ${call.name}: ${names}`,
    );
  });
});
