// Each service is ready only with its own store and the broker: with RabbitMQ cut off, every
// service target reports NOT_SERVING over grpc.health.v1 (so Kubernetes takes it out of the
// Service), and SERVING again once the broker is back.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients, createLogger, loadConfig, runModules, SERVICE_NAMES, type Clients, type RunningProcess } from '@supply/kit';
import { ALL_MODULES } from '@supply/runner';
import { freePortRange } from '../support/ports';
import { Relay } from '../support/relay';
import { missingBackend } from '../support/require';
import { dropBusNamespace } from '../e2e/workflows-support';

const AMQP_URL = process.env.AMQP_URL;

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('service readiness follows the broker', function () {
  this.timeout(120_000);
  if (!AMQP_URL) {
    missingBackend('AMQP', 'AMQP_URL is not set');
    return;
  }
  const procs: RunningProcess[] = [];
  const namespace = `readiness-${randomBytes(4).toString('hex')}`;
  let relay: Relay;
  let dataDir: string;
  let clients: Clients;

  before(async () => {
    const broker = new URL(AMQP_URL);
    relay = new Relay({ host: broker.hostname, port: Number(broker.port || 5672) });
    await relay.start();
    const viaRelay = new URL(AMQP_URL);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    dataDir = mkdtempSync(join(tmpdir(), 'supply-readiness-bus-'));
    const base = await freePortRange(5);
    const credential = randomBytes(32).toString('base64url');
    for (const target of SERVICE_NAMES) {
      const config = loadConfig(
        {
          target,
          GRPC_BASE_PORT: base,
          DATA_DIR: join(dataDir, target),
          SERVICE_CREDENTIAL: credential,
          LOG_LEVEL: 'silent',
          METRICS_PORT: 0,
        },
        { AMQP_URL: viaRelay.toString(), BUS_NAMESPACE: namespace },
      );
      procs.push(
        await runModules(
          config,
          createLogger(config.LOG_LEVEL),
          ALL_MODULES.filter((m) => m.name === target),
        ),
      );
    }
    clients = createClients(loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir }, {}));
  });
  after(async () => {
    clients?.close();
    await relay?.cut();
    for (const p of procs.reverse()) await p.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await dropBusNamespace({ AMQP_URL, BUS_NAMESPACE: namespace });
  });

  it('every service answers SERVING with the broker up', async () => {
    for (const s of SERVICE_NAMES) await until(`${s} SERVING`, () => clients.health(s), 20_000);
  });

  it('with the broker cut off, every service owning a bus connection answers NOT_SERVING; SERVING again once it is back', async () => {
    await relay.cut();
    const notServing = async (s: (typeof SERVICE_NAMES)[number]) => !(await clients.health(s));
    for (const s of ['tokens', 'reference', 'compute', 'workflows'] as const) await until(`${s} NOT_SERVING`, () => notServing(s), 20_000);
    // The transactional service keeps no bus connection: its readiness is its store alone.
    assert.equal(await clients.health('transactional'), true);
    await relay.start();
    for (const s of SERVICE_NAMES) await until(`${s} SERVING after the broker is back`, () => clients.health(s), 60_000);
  });
});
