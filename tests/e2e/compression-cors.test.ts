import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser';
import { startSystem, type TestSystem } from '../support/system';

/** A raw HTTP exchange: the bytes as sent, not decoded the way fetch would. */
function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('compression and CORS', function () {
  this.timeout(90_000);
  const APP_ORIGIN_HOST = 'localhost';
  let sys: TestSystem;
  let token: string;
  /** Serves the "browser app" page from another origin than the API's. */
  let appServer: Server;
  let appOrigin: string;

  before(async () => {
    appServer = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<!doctype html><html><body>app</body></html>');
    });
    await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
    appOrigin = `http://${APP_ORIGIN_HOST}:${(appServer.address() as AddressInfo).port}`;
    sys = await startSystem({ env: { CORS_ORIGINS: `https://planner.example.test, ${appOrigin}`, CORS_MAX_AGE_SECONDS: '900' } });
    token = await sys.tokenFor('demo', 'planner@demo.test');
  });
  after(async () => {
    await sys?.stop();
    await new Promise((resolve) => appServer?.close(resolve));
  });

  describe('compression', () => {
    const page = () => `${sys.baseUrl}/demo/api/v1/sales-data?per_page=5000`;
    const auth = () => ({ Authorization: `Bearer ${token}`, Accept: 'application/json' });

    it('sends a 5,000-row page brotli-compressed, and gzip-compressed to a gzip-only client', async () => {
      const br = await raw(page(), { headers: { ...auth(), 'Accept-Encoding': 'gzip, br' } });
      assert.equal(br.status, 200);
      assert.equal(br.headers['content-encoding'], 'br');
      assert.match(String(br.headers.vary), /Accept-Encoding/i);
      const plain = brotliDecompressSync(br.bytes);
      const body = JSON.parse(plain.toString('utf8'));
      assert.equal(body.data.length, 5000);
      assert.ok(br.bytes.length * 5 < plain.length, `compressed ${br.bytes.length} of ${plain.length} bytes`);

      const gz = await raw(page(), { headers: { ...auth(), 'Accept-Encoding': 'gzip' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(JSON.parse(gunzipSync(gz.bytes).toString('utf8')).data.length, 5000);
    });

    it('sends the page as is to a client that accepts no encoding, and small answers uncompressed', async () => {
      const identity = await raw(page(), { headers: auth() });
      assert.equal(identity.headers['content-encoding'], undefined);
      assert.equal(JSON.parse(identity.bytes.toString('utf8')).data.length, 5000);
      const small = await raw(`${sys.baseUrl}/healthz`, { headers: { 'Accept-Encoding': 'gzip, br' } });
      assert.equal(small.headers['content-encoding'], undefined);
      assert.deepEqual(JSON.parse(small.bytes.toString('utf8')), { status: 'ok' });
    });
  });

  describe('CORS', () => {
    const preflight = (origin: string) =>
      raw(`${sys.baseUrl}/demo/api/v1/uoms`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key',
        },
      });

    it('answers a preflight from a listed origin with 204, the allowed headers and a cache lifetime', async () => {
      const res = await preflight('https://planner.example.test');
      assert.equal(res.status, 204);
      assert.equal(res.headers['access-control-allow-origin'], 'https://planner.example.test');
      assert.equal(res.headers['access-control-max-age'], '900');
      assert.match(String(res.headers['access-control-allow-headers']), /Authorization/);
      assert.match(String(res.headers['access-control-allow-headers']), /Idempotency-Key/);
      assert.match(String(res.headers['access-control-allow-methods']), /PATCH/);
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
    });

    it('lets a listed origin read the answer and its metering headers; any other origin gets no CORS headers', async () => {
      const ok = await raw(`${sys.baseUrl}/demo/api/v1/uoms`, {
        headers: { Origin: 'https://planner.example.test', Authorization: `Bearer ${token}`, Accept: 'application/json' },
      });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['access-control-allow-origin'], 'https://planner.example.test');
      assert.match(String(ok.headers['access-control-expose-headers']), /Credits-Remaining/);
      const other = await raw(`${sys.baseUrl}/demo/api/v1/uoms`, {
        headers: { Origin: 'https://evil.example.test', Authorization: `Bearer ${token}`, Accept: 'application/json' },
      });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      const otherPreflight = await preflight('https://evil.example.test');
      assert.equal(otherPreflight.headers['access-control-allow-origin'], undefined);
    });

    it('is off by default: no CORS headers, and OPTIONS is not a method of the API', async () => {
      const plain = await startSystem();
      try {
        const res = await raw(`${plain.baseUrl}/demo/api/v1/uoms`, {
          method: 'OPTIONS',
          headers: { Origin: 'https://planner.example.test', 'Access-Control-Request-Method': 'GET' },
        });
        assert.equal(res.headers['access-control-allow-origin'], undefined);
        assert.equal(res.status, 405);
      } finally {
        await plain.stop();
      }
    });

    describe('in Chromium', () => {
      let browser: Browser;
      before(async function () {
        const missing = chromiumMissing();
        if (missing) {
          console.log(`    skipped: ${missing}`);
          this.skip();
        }
        browser = await launchChromium();
      });
      after(() => browser?.close());

      const callFrom = async (origin: string) => {
        const page = await browser.newPage();
        try {
          await page.goto(`${origin}/`);
          return await page.evaluate(
            async ({ url, bearer }) => {
              try {
                const res = await fetch(url, { headers: { Authorization: `Bearer ${bearer}`, 'Idempotency-Key': 'browser-cors-1' } });
                const body = (await res.json()) as { data: unknown[] };
                return {
                  status: res.status,
                  rows: body.data.length,
                  credits: res.headers.get('Credits-Remaining'),
                  requestId: res.headers.get('X-Request-Id'),
                };
              } catch (err) {
                return { error: String(err) };
              }
            },
            { url: `${sys.baseUrl}/demo/api/v1/uoms`, bearer: token },
          );
        } finally {
          await page.close();
        }
      };

      it('a page of a listed origin calls the API with a bearer token (after a preflight) and reads the metering headers', async () => {
        const result = await callFrom(appOrigin);
        assert.equal((result as { status: number }).status, 200, JSON.stringify(result));
        assert.ok((result as { rows: number }).rows > 0);
        assert.match(String((result as { credits: string }).credits), /^\d+$/);
        assert.ok((result as { requestId: string }).requestId);
      });

      it('a page of another origin is refused by the browser', async () => {
        const port = (appServer.address() as AddressInfo).port;
        const result = await callFrom(`http://127.0.0.1:${port}`);
        assert.match(String((result as { error?: string }).error), /TypeError/);
      });
    });
  });
});
