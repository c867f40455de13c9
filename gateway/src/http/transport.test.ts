import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { ConfigError, loadConfig } from '@supply/kit';
import helmet from 'helmet';
import { API_SECURITY_HEADERS, HELMET_OPTIONS, compressAnswers, securityHeaders } from './transport';

function get(port: number, path: string): Promise<{ headers: IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    request({ port, path, headers: { 'Accept-Encoding': 'gzip, br' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('compressAnswers', () => {
  let server: Server;
  let port: number;
  const big = 'x'.repeat(20_000);
  const gz = gzipSync(Buffer.from(big));

  before(async () => {
    const app = express();
    app.use(compressAnswers(1024));
    app.get('/json', (_req, res) => res.json({ big }));
    app.get('/csv', (_req, res) => res.type('text/csv').send(`a,b\n${big}`));
    app.get('/small', (_req, res) => res.json({ small: true }));
    app.get('/zip', (_req, res) => res.type('application/zip').send(Buffer.from(big)));
    app.get('/pre-encoded', (_req, res) => res.set('Content-Encoding', 'gzip').type('application/json').send(gz));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('compresses JSON and CSV above the threshold with the encoding the client prefers', async () => {
    assert.equal((await get(port, '/json')).headers['content-encoding'], 'br');
    assert.equal((await get(port, '/csv')).headers['content-encoding'], 'br');
  });

  it('never compresses small answers, binary types or an answer that is already encoded', async () => {
    assert.equal((await get(port, '/small')).headers['content-encoding'], undefined);
    assert.equal((await get(port, '/zip')).headers['content-encoding'], undefined);
    const pre = await get(port, '/pre-encoded');
    assert.equal(pre.headers['content-encoding'], 'gzip');
    assert.deepEqual(pre.bytes, gz, 'sent byte for byte, not compressed twice');
  });
});

describe('CORS_ORIGINS', () => {
  // The all-in-one target keeps generated secrets in DATA_DIR.
  const dir = mkdtempSync(join(tmpdir(), 'cors-config-'));
  const env = (extra: Record<string, string> = {}) => ({ DATA_DIR: dir, ...extra });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is off unless set, and takes a comma list of origins', () => {
    assert.equal(loadConfig({}, env()).CORS_ORIGINS, undefined);
    assert.deepEqual(loadConfig({}, env({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' })).CORS_ORIGINS, [
      'https://a.example',
      'http://localhost:5173',
    ]);
  });

  it('refuses anything but scheme://host[:port] origins', () => {
    for (const bad of ['*', 'a.example', 'https://a.example/path', 'ftp://a.example']) {
      assert.throws(
        () => loadConfig({}, env({ CORS_ORIGINS: bad })),
        (err: Error) => err instanceof ConfigError && /CORS_ORIGINS/.test(err.message),
        bad,
      );
    }
  });
});

describe('securityHeaders', () => {
  /** The headers an app sends for GET /, less those that differ per answer. */
  async function headersOf(app: express.Express, path = '/'): Promise<IncomingHttpHeaders> {
    app.get(path, (_req, res) => res.json({ ok: true }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { headers } = await get((server.address() as AddressInfo).port, path);
      delete headers.date;
      return headers;
    } finally {
      server.close();
    }
  }

  it('sends exactly the headers helmet sends, worked out once', async () => {
    const viaHelmet = express();
    viaHelmet.use(helmet(HELMET_OPTIONS));
    const precomputed = express();
    precomputed.disable('x-powered-by');
    precomputed.use(securityHeaders());
    const expected = await headersOf(viaHelmet);
    assert.ok(expected['content-security-policy']?.includes("script-src 'self'"));
    assert.equal(expected['x-content-type-options'], 'nosniff');
    assert.deepEqual(await headersOf(precomputed), expected);
  });

  it('gives API answers the headers a JSON answer needs, not those of a page', async () => {
    const app = express();
    app.disable('x-powered-by');
    app.use(securityHeaders());
    const headers = await headersOf(app, '/demo/api/v1/uoms');
    const expected = Object.fromEntries(API_SECURITY_HEADERS.map(([name, value]) => [name.toLowerCase(), value]));
    for (const [name, value] of Object.entries(expected)) assert.equal(headers[name], value, name);
    assert.equal(headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
    for (const pageOnly of [
      'cross-origin-opener-policy',
      'x-dns-prefetch-control',
      'x-download-options',
      'origin-agent-cluster',
      'x-xss-protection',
    ]) {
      assert.equal(headers[pageOnly], undefined, pageOnly);
    }
  });
});
