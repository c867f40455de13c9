import { strict as assert } from 'node:assert';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { pino } from 'pino';
import { isAppError, openBus, openStore, type Bus, type Delivery } from '@supply/kit';
import { Relay } from '../support/relay';
import { missingBackend } from '../support/require';

const run = promisify(execFile);
const runNamespace = `test-bus-faults-${process.pid}-${Date.now().toString(36)}`;
const isUnavailable = (e: unknown) => isAppError(e) && e.code === 'unavailable';

async function until(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Pino lines in memory, so a test can see that the bus noticed the fault. */
function capturedLogger(): { logger: pino.Logger; messages: string[] } {
  const messages: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void messages.push(JSON.parse(line).msg as string) });
  return { logger, messages };
}

/** The broker-side ids of the connections our bus opened, found by the connection name it announces. */
async function brokerConnections(connectionName: string): Promise<string[]> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q', '--no-table-headers']);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${connectionName}"}`))
    .map((line) => line.split('\t')[0]!);
}

/** Closes a connection from the broker side, as a broker restart or an operator would. */
async function forceClose(pid: string): Promise<void> {
  await run('rabbitmqctl', ['close_connection', pid, 'test']);
}

async function deleteQueues(url: string, names: string[]): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    for (const name of names) {
      const channel = await connection.createChannel();
      await channel.deleteQueue(name).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
    const channel = await connection.createChannel();
    await channel.deleteExchange(`${runNamespace}.dead-letter`).catch(() => undefined);
    await channel.deleteExchange(`${runNamespace}.topic.fault-events`).catch(() => undefined);
    await channel.close().catch(() => undefined);
  } finally {
    await connection.close();
  }
}

/** A started relay to the broker of `url`, and the AMQP URL that goes through it. */
async function relayTo(url: string): Promise<{ relay: Relay; amqpUrl: string }> {
  const target = new URL(url);
  const relay = new Relay({ host: target.hostname, port: Number(target.port || 5672) });
  await relay.start();
  const viaRelay = new URL(url);
  viaRelay.host = `127.0.0.1:${relay.port}`;
  return { relay, amqpUrl: viaRelay.toString() };
}

function amqpFaults(url: string): void {
  describe('Bus faults: amqp', function () {
    this.timeout(40_000);
    const queues = ['fault-stream', 'fault-outage', 'fault-deleted'];
    after(() =>
      deleteQueues(
        url,
        queues.flatMap((q) => [`${runNamespace}.${q}`, `${runNamespace}.${q}.dead`, `${runNamespace}.${q}.retry`]),
      ),
    );

    it('reconnects after the broker force-closes its connection mid-stream, and no message is lost', async () => {
      const { logger, messages } = capturedLogger();
      // Many redeliveries are expected when the connection drops under a full prefetch window.
      const bus = await openBus({
        amqpUrl: url,
        namespace: runNamespace,
        logger,
        maxDeliveries: 20,
        reconnectDelayMs: 50,
        reconnectMaxDelayMs: 1_000,
      });
      try {
        const consumed = new Set<string>();
        await bus.consume(
          'fault-stream',
          async (_body: number, delivery) => {
            await sleep(1);
            consumed.add(delivery.messageId);
          },
          { prefetch: 10 },
        );
        const events: unknown[] = [];
        await bus.subscribe('fault-events', (event) => {
          events.push(event);
        });

        const [pid, ...others] = await brokerConnections(`bus:${runNamespace}`);
        assert.ok(pid && others.length === 0, 'one broker connection per bus');

        const sent: string[] = [];
        let streaming = true;
        const sender = async (lane: number): Promise<void> => {
          for (let i = 0; streaming; i++) {
            const id = `m-${lane}-${i}`;
            await bus.send('fault-stream', i, { messageId: id });
            sent.push(id);
            await sleep(2);
          }
        };
        const senders = Promise.all(Array.from({ length: 4 }, (_, lane) => sender(lane)));
        await until(() => sent.length >= 100, 'the stream to get going');
        await forceClose(pid);
        await until(() => messages.filter((m) => m === 'connected to the message broker').length === 2, 'the reconnection');
        const sentBeforeReconnect = sent.length;
        await until(() => sent.length >= sentBeforeReconnect + 100, 'sends after the reconnection');
        streaming = false;
        await senders;

        await until(() => consumed.size === sent.length, 'every sent message consumed');
        assert.deepEqual([...consumed].sort(), [...sent].sort());
        assert.ok(messages.includes('lost the broker connection; reconnecting'));

        await bus.publish('fault-events', { after: 'reconnect' });
        await until(() => events.length === 1, 'the subscription to resume');
      } finally {
        await bus.close();
      }
    });

    it('holds sends through an outage, fails them unavailable after the timeout, and recovers', async () => {
      const { relay, amqpUrl } = await relayTo(url);
      const bus: Bus = await openBus({
        amqpUrl,
        namespace: runNamespace,
        sendTimeoutMs: 800,
        reconnectDelayMs: 50,
        reconnectMaxDelayMs: 200,
      });
      try {
        const got: number[] = [];
        await bus.consume<number>('fault-outage', async (body) => {
          got.push(body);
        });
        await bus.send('fault-outage', 1);
        await until(() => got.length === 1, 'the first message');

        await relay.cut();
        const started = Date.now();
        await assert.rejects(bus.send('fault-outage', 2), isUnavailable);
        const waited = Date.now() - started;
        assert.ok(waited >= 700 && waited < 3_000, `failed after the send timeout (${waited} ms)`);

        const held = bus.send('fault-outage', 3);
        await sleep(200);
        await relay.start();
        await held;
        await until(() => got.includes(3), 'the held message after recovery');
        await bus.ping();
      } finally {
        await bus.close();
        await relay.cut();
      }
    });

    it('tells a subscriber it missed broadcasts when it is attached again after losing its connection, and only then', async () => {
      const { relay, amqpUrl } = await relayTo(url);
      const subscriber: Bus = await openBus({
        amqpUrl,
        namespace: runNamespace,
        reconnectDelayMs: 50,
        reconnectMaxDelayMs: 200,
      });
      const publisher: Bus = await openBus({ amqpUrl: url, namespace: runNamespace });
      try {
        const heard: number[] = [];
        let gaps = 0;
        await subscriber.subscribe<number>('fault-events', (n) => void heard.push(n), { onGap: () => void gaps++ });
        await publisher.publish('fault-events', 1);
        await until(() => heard.includes(1), 'the first event');
        assert.equal(gaps, 0, 'the first attach is no gap');

        await relay.cut();
        // Published while the subscriber has no queue: it never arrives, which is what the gap says.
        await publisher.publish('fault-events', 2);
        await relay.start();
        await until(() => gaps === 1, 'the gap after the reconnect');
        // The gap is told once the new queue is bound, so what is published from then on arrives.
        await publisher.publish('fault-events', 3);
        await until(() => heard.includes(3), 'an event after the reconnect');
        assert.ok(!heard.includes(2));
        assert.equal(gaps, 1);
      } finally {
        await subscriber.close();
        await publisher.close();
        await relay.cut();
      }
    });

    it('redeclares and resumes when its queue is deleted under it', async () => {
      const bus = await openBus({ amqpUrl: url, namespace: runNamespace });
      try {
        const got: number[] = [];
        await bus.consume<number>('fault-deleted', async (body) => {
          got.push(body);
        });
        await bus.send('fault-deleted', 1);
        await until(() => got.length === 1, 'the first message');
        await deleteQueues(url, [`${runNamespace}.fault-deleted`]);
        await bus.send('fault-deleted', 2);
        await until(() => got.includes(2), 'the message sent after the deletion');
      } finally {
        await bus.close();
      }
    });

    it('a consumer in another process resumes too, when a sender declares the deleted queue again at once', async () => {
      // A quorum queue declared again before the broker has cancelled its consumers leaves them attached
      // to nothing, silently; a sender that finds the queue gone waits for the broker to tell them first.
      const consumer = await openBus({ amqpUrl: url, namespace: runNamespace });
      const sender = await openBus({ amqpUrl: url, namespace: runNamespace });
      try {
        const got: number[] = [];
        await consumer.consume<number>('fault-deleted-elsewhere', async (body) => {
          got.push(body);
        });
        await sender.send('fault-deleted-elsewhere', 1);
        await until(() => got.length === 1, 'the first message');
        // Only the queue, and the send right after: the window in which the broker has not cancelled yet.
        const admin = await amqp.connect(url);
        try {
          await (await admin.createChannel()).deleteQueue(`${runNamespace}.fault-deleted-elsewhere`);
        } finally {
          await admin.close();
        }
        const started = Date.now();
        await sender.send('fault-deleted-elsewhere', 2);
        await until(() => got.includes(2), 'the message sent after the deletion, in the other process');
        assert.ok(Date.now() - started < 5_000, 'held for a moment, not for the send timeout');
      } finally {
        await sender.close();
        await consumer.close();
      }
    });

    it('refuses to open with unavailable when no broker answers', async () => {
      const server = createServer().listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      await new Promise((resolve) => server.close(resolve));
      const started = Date.now();
      await assert.rejects(openBus({ amqpUrl: `amqp://guest:guest@127.0.0.1:${port}`, connectTimeoutMs: 300 }), isUnavailable);
      assert.ok(Date.now() - started < 3_000);
    });
  });
}

const FIXTURE = fileURLToPath(new URL('./fixtures/bus-crash-consumer.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('Bus faults: embedded', function () {
  this.timeout(30_000);
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'bus-faults-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  it('redelivers the message a SIGKILLed process was handling, then the rest in order', async () => {
    const queue = 'crash';
    const sending = await openStore({ database: 'bus', dataDir });
    const sender = await openBus({ store: sending, namespace: runNamespace });
    for (const id of ['a', 'b', 'c']) await sender.send(queue, { id }, { messageId: `crash-${id}` });
    await sender.close();
    await sending.close();

    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dataDir, runNamespace, queue], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    const handling: Array<Record<string, unknown>> = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const report = JSON.parse(line) as Record<string, unknown>;
      if (report.event === 'handling') handling.push(report);
    });
    try {
      await until(() => handling.length === 1, 'the child to start handling');
      await sleep(100);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    assert.deepEqual(handling, [{ event: 'handling', body: { id: 'a' }, messageId: 'crash-a', deliveryCount: 1 }]);
    assert.equal(child.signalCode, 'SIGKILL');

    const store = await openStore({ database: 'bus', dataDir });
    const bus = await openBus({ store, namespace: runNamespace });
    try {
      const got: Array<{ body: unknown } & Delivery> = [];
      await bus.consume(queue, async (body, delivery) => {
        got.push({ body, ...delivery });
      });
      await until(() => got.length === 3, 'every message after the restart');
      assert.deepEqual(got, [
        { body: { id: 'a' }, messageId: 'crash-a', deliveryCount: 2 },
        { body: { id: 'b' }, messageId: 'crash-b', deliveryCount: 1 },
        { body: { id: 'c' }, messageId: 'crash-c', deliveryCount: 1 },
      ]);
    } finally {
      await bus.close();
      await store.close();
    }
  });
});

const amqpUrl = process.env.AMQP_URL;
if (amqpUrl) {
  amqpFaults(amqpUrl);
} else {
  describe('Bus faults: amqp', () => missingBackend('AMQP', 'AMQP_URL is not set'));
}
