// The OpenAPI hooks (tests/support/openapi-hooks.ts) check answers read with node:http, not only
// those of fetch: a stand-in server answers an API path off the document, and the hooks see it.
import assert from 'node:assert/strict';
import { createServer, get, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { takeViolations } from '../support/openapi-hooks';

const uom = { id: 1, name: 'Each', abbreviation: 'ea', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' };
const valid = JSON.stringify({ data: [uom], meta: {}, links: '/demo/api/v1/uoms/1' });
const invalid = JSON.stringify({ data: [{ ...uom, colour: 'red' }], meta: {}, links: '/demo/api/v1/uoms/1' });

/** node:http, the way the e2e helpers read answers: collects the (still encoded) bytes. */
function raw(url: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the OpenAPI hooks check answers read with node:http', () => {
  let server: Server;
  let base: string;

  before(async () => {
    // /demo/api/v1/uoms/1 as the gateway would answer it, and as it must not.
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const body = url.searchParams.get('shape') === 'invalid' ? invalid : valid;
      const status = Number(url.searchParams.get('status') ?? 200);
      const encoding = url.searchParams.get('encoding');
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Request-Id', 'raw-answer-test');
      if (encoding) res.setHeader('Content-Encoding', encoding);
      res.statusCode = status;
      res.end(encoding === 'br' ? brotliCompressSync(body) : encoding === 'gzip' ? gzipSync(body) : body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/demo/api/v1/uoms/1`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));
  afterEach(() => takeViolations());

  it('passes a documented answer, plain, brotli- or gzip-encoded', async () => {
    for (const query of ['', '?encoding=br', '?encoding=gzip']) {
      const answer = await raw(`${base}${query}`);
      assert.equal(answer.status, 200);
      assert.deepEqual(takeViolations(), [], query);
    }
  });

  it('records an undocumented status, and a body off its schema once decoded', async () => {
    await raw(`${base}?status=500`);
    assert.match(takeViolations().join('\n'), /status 500 is not documented/);
    for (const query of ['?shape=invalid', '?shape=invalid&encoding=br', '?shape=invalid&encoding=gzip']) {
      const answer = await raw(`${base}${query}`);
      assert.equal(answer.status, 200);
      assert.match(takeViolations().join('\n'), /additional properties \(colour\)/, query);
    }
  });

  it('sees http.get and request(options) calls too', async () => {
    await new Promise<void>((resolve, reject) =>
      get(`${base}?status=500`, (res) => {
        res.resume();
        res.on('end', resolve);
      }).on('error', reject),
    );
    assert.match(takeViolations().join('\n'), /status 500 is not documented/);
    const url = new URL(base);
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: `${url.pathname}?shape=invalid`, method: 'GET' });
      req.on('response', (res) => {
        res.setEncoding('utf8');
        res.on('data', () => {});
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
    assert.match(takeViolations().join('\n'), /additional properties \(colour\)/);
  });
});
