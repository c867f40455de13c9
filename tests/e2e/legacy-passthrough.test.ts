import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSystem, type TestSystem } from '../support/system';
import { freePortRange } from '../support/ports';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bytes: number;
}

/** The previous deployment: a real HTTP server that records what reaches it. */
function upstream(seen: Seen[]): Server {
  return createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, bytes });
      if (req.url === '/demo/api/v1/slow') return; // never answers
      if (req.url === '/demo/api/v1/stream') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first\n');
        setTimeout(() => res.end('second\n'), 400);
        return;
      }
      res.writeHead(200, {
        'Content-Type': 'application/json',
        Connection: 'keep-alive, X-Upstream-Hop',
        'X-Upstream-Hop': 'secret',
        'Keep-Alive': 'timeout=99',
        'X-Legacy': 'yes',
      });
      res.end(JSON.stringify({ from: 'legacy', method: req.method, url: req.url, bytes }));
    });
  });
}

/** A raw exchange, timing the first body chunk against the end. */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; text: string; firstChunkAt: number; endAt: number }>(
    (resolve, reject) => {
      const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
        let text = '';
        let firstChunkAt = 0;
        res.on('data', (c: Buffer) => {
          firstChunkAt ||= Date.now();
          text += c.toString('utf8');
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, firstChunkAt, endAt: Date.now() }));
      });
      req.on('error', reject);
      req.end(init.body);
    },
  );
}

describe('legacy passthrough (LEGACY_UPSTREAM_URL)', function () {
  this.timeout(90_000);
  const seen: Seen[] = [];
  let server: Server;
  let sys: TestSystem;
  let token: string;

  before(async () => {
    server = upstream(seen);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    sys = await startSystem({ env: { LEGACY_UPSTREAM_URL: `http://127.0.0.1:${port}`, LEGACY_UPSTREAM_TIMEOUT_MS: '700' } });
    token = await sys.tokenFor('demo', 'planner@demo.test');
  });
  after(async () => {
    await sys?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('serves the routes this service implements itself, and forwards the paths and methods it lacks', async () => {
    const own = await fetch(`${sys.baseUrl}/demo/api/v1/uoms`, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
    assert.equal(own.status, 200);
    assert.equal(own.headers.get('via'), null);
    assert.equal(seen.length, 0, 'nothing reached the upstream');

    const old = await fetch(`${sys.baseUrl}/demo/api/v1/old-report?week=3`, {
      headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': 'passthrough-test-1' },
    });
    assert.equal(old.status, 200);
    assert.deepEqual(await old.json(), { from: 'legacy', method: 'GET', url: '/demo/api/v1/old-report?week=3', bytes: 0 });
    assert.equal(old.headers.get('x-legacy'), 'yes');
    assert.equal(old.headers.get('x-request-id'), 'passthrough-test-1');
    assert.equal(seen[0]!.headers['x-request-id'], 'passthrough-test-1');
    assert.equal(seen[0]!.headers.authorization, `Bearer ${token}`);

    // PUT is no method of /uoms here: the previous deployment may have it.
    const put = await fetch(`${sys.baseUrl}/demo/api/v1/uoms`, {
      method: 'PUT',
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(put.status, 200);
    assert.equal(((await put.json()) as { method: string }).method, 'PUT');

    // Pages and platform routes are never forwarded.
    assert.equal((await fetch(`${sys.baseUrl}/nothing-here`)).status, 404);
    assert.equal(seen.length, 2);
  });

  it('drops hop-by-hop fields both ways and says it is a proxy (Via)', async () => {
    const res = await raw(`${sys.baseUrl}/demo/api/v1/old-report`, {
      headers: {
        Connection: 'keep-alive, X-Client-Hop',
        'X-Client-Hop': 'secret',
        'Proxy-Authorization': 'Basic c2VjcmV0',
        TE: 'trailers',
      },
    });
    assert.equal(res.status, 200);
    const sent = seen[0]!.headers;
    assert.equal(sent['x-client-hop'], undefined);
    assert.equal(sent['proxy-authorization'], undefined);
    assert.equal(sent.te, undefined);
    assert.match(String(sent.via), /supply-gateway/);
    assert.equal(res.headers['x-upstream-hop'], undefined);
    assert.notEqual(res.headers['keep-alive'], 'timeout=99');
    assert.match(String(res.headers.via), /supply-gateway/);
  });

  it('streams: the first chunk arrives before the upstream finishes, and a body larger than BODY_LIMIT_KB goes through whole', async () => {
    const stream = await raw(`${sys.baseUrl}/demo/api/v1/stream`);
    assert.equal(stream.text, 'first\nsecond\n');
    assert.ok(stream.endAt - stream.firstChunkAt >= 250, `first chunk ${stream.endAt - stream.firstChunkAt} ms before the end`);

    const body = Buffer.alloc(12 * 1024 * 1024, 'a');
    const upload = await raw(`${sys.baseUrl}/demo/api/v1/big-upload`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'text/csv', 'Content-Length': String(body.length) },
    });
    assert.equal(upload.status, 200, upload.text);
    assert.equal(JSON.parse(upload.text).bytes, body.length);
  });

  it('answers 504 when the upstream does not answer in time, as a problem', async () => {
    const res = await fetch(`${sys.baseUrl}/demo/api/v1/slow`, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 504);
    assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
    const body = (await res.json()) as { type: string; detail: string };
    assert.equal(body.type, '/problems/upstream-timeout');
    assert.doesNotMatch(JSON.stringify(body), /127\.0\.0\.1/);
  });

  it('answers 503 while the upstream cannot be reached, without naming its address', async () => {
    const closedPort = await freePortRange(1);
    const alone = await startSystem({ env: { LEGACY_UPSTREAM_URL: `http://127.0.0.1:${closedPort}` } });
    try {
      const res = await fetch(`${alone.baseUrl}/demo/api/v1/old-report`);
      assert.equal(res.status, 503);
      const text = await res.text();
      assert.match(text, /service-unavailable/);
      assert.doesNotMatch(text, new RegExp(String(closedPort)));
    } finally {
      await alone.stop();
    }
  });
});
