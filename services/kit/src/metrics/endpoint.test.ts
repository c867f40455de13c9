import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config/config';
import { startMetricsEndpoint } from './endpoint';
import { Metrics } from './metrics';
import { serveMetrics } from './server';

/** A port held by another listener for the duration of `fn`. */
async function withPortTaken<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, resolve));
  try {
    return await fn((holder.address() as { port: number }).port);
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
}

describe('metrics endpoint', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'metrics-unit-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = (env: Record<string, string>) => loadConfig({ target: 'all', DATA_DIR: dataDir }, env);
  const silent = pino({ level: 'silent' });

  it('defaults to 9464, and METRICS_PORT=0 turns metrics off', async () => {
    assert.equal(config({}).metricsPort, 9464);
    assert.equal(await startMetricsEndpoint(new Metrics({ defaultMetrics: false }), config({ METRICS_PORT: '0' }), silent), undefined);
  });

  it("takes start:distributed's per-target default when METRICS_PORT is unset; METRICS_PORT wins", () => {
    const defaulted = loadConfig(
      { target: 'workflows', DATA_DIR: dataDir, SERVICE_CREDENTIAL: 'c'.repeat(32), defaultMetricsPort: '9468' },
      {},
    );
    assert.equal(defaulted.metricsPort, 9468);
    assert.equal(defaulted.METRICS_PORT, undefined, 'still a default: taken, it only warns');
    assert.equal(
      loadConfig(
        { target: 'workflows', DATA_DIR: dataDir, SERVICE_CREDENTIAL: 'c'.repeat(32), defaultMetricsPort: 9468 },
        { METRICS_PORT: '9500' },
      ).metricsPort,
      9500,
    );
    assert.throws(
      () => loadConfig({ target: 'all', DATA_DIR: dataDir, defaultMetricsPort: 'x' }, {}),
      (err: Error) => err instanceof ConfigError && /default-metrics-port/.test(err.message),
    );
  });

  it('refuses a METRICS_PORT that is the API port, or not a port', () => {
    assert.throws(
      () => config({ PORT: '8081', METRICS_PORT: '8081' }),
      (err: Error) => err instanceof ConfigError && /METRICS_PORT/.test(err.message),
    );
    assert.throws(
      () => config({ METRICS_PORT: 'nine' }),
      (err: Error) => err instanceof ConfigError && /METRICS_PORT/.test(err.message),
    );
  });

  it('serves GET /metrics in Prometheus text format and nothing else', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.httpRequests.inc({ route: '/:tenant/api/v1/items', method: 'GET', status: '200' });
    const endpoint = await serveMetrics(metrics, 0);
    try {
      const res = await fetch(`http://127.0.0.1:${endpoint.port}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
      assert.match(await res.text(), /^supply_http_requests_total\{route="\/:tenant\/api\/v1\/items",method="GET",status="200"\} 1$/m);
      assert.equal((await fetch(`http://127.0.0.1:${endpoint.port}/`)).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${endpoint.port}/metrics`, { method: 'POST' })).status, 405);
    } finally {
      await endpoint.close();
    }
  });

  it('fails start-up when a chosen METRICS_PORT is taken; only warns when the default one is', async () => {
    await withPortTaken(async (port) => {
      await assert.rejects(
        startMetricsEndpoint(new Metrics({ defaultMetrics: false }), config({ METRICS_PORT: String(port) }), silent),
        /METRICS_PORT/,
      );
      const warned: unknown[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void warned.push(JSON.parse(line)) });
      const defaulted = { ...config({}), metricsPort: port };
      assert.equal(await startMetricsEndpoint(new Metrics({ defaultMetrics: false }), defaulted, logger), undefined);
      assert.equal(warned.length, 1);
    });
  });
});
