// The operations CLI (`npm run ops -- dead-letters ...`) as an operator runs it: its own
// process, the server's environment, against the embedded bus (a data directory another
// process owns) and against RabbitMQ.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createLogger, openBus, openStore, type Bus, type Store } from '@supply/kit';
import { CHUNKS_QUEUE } from '@supply/workflows';
import { skipUnless } from '../support/require';

const CLI = 'services/runner/src/ops/cli.ts';
const AMQP_URL = process.env.AMQP_URL;
const exec = promisify(execFile);

async function ops(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'error', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Sends two chunk messages a poisoned consumer dead-letters, then closes the bus (the CLI is another process). */
async function deadLetterTwo(open: () => Promise<Bus>): Promise<void> {
  const bus = await open();
  try {
    await bus.send(CHUNKS_QUEUE, { job_id: 1, tenant: 'demo', step: 'load', seq: 0 }, { messageId: 'dead-0' });
    await bus.send(CHUNKS_QUEUE, { job_id: 1, tenant: 'demo', step: 'load', seq: 1 }, { messageId: 'dead-1' });
    const sub = await bus.consume(CHUNKS_QUEUE, async () => {
      throw new Error('poison');
    });
    for (let i = 0; i < 200 && (await bus.deadLetters(CHUNKS_QUEUE)).length < 2; i++) await sleep(25);
    await sub.close();
    assert.equal((await bus.deadLetters(CHUNKS_QUEUE)).length, 2);
  } finally {
    await bus.close();
  }
}

function cliContract(name: string, setUp: () => { env: Record<string, string>; open: () => Promise<Bus>; cleanup(): Promise<void> }) {
  describe(`ops CLI: dead letters (${name})`, function () {
    this.timeout(60_000);
    let target: ReturnType<typeof setUp>;
    beforeEach(function () {
      target = setUp();
    });
    afterEach(() => target.cleanup());

    it('lists every work queue’s dead letters, replays one queue’s with a limit, and they run again', async () => {
      await deadLetterTwo(target.open);
      const listed = await ops(target.env, 'dead-letters', 'list');
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^workflows\.sync-chunks: 2 dead letters$/m);
      assert.match(listed.stdout, /^ {2}dead-0 {2}\{"job_id":1,"tenant":"demo","step":"load","seq":0\}$/m);
      assert.match(listed.stdout, /^compute\.forecast-chunks: 0 dead letters$/m);
      assert.match(listed.stdout, /^tokens\.usage-totals: 0 dead letters$/m);
      assert.match(listed.stdout, /^tokens\.usage: 0 dead letters$/m);
      const json = JSON.parse((await ops(target.env, 'dead-letters', 'list', 'workflows.sync-chunks', '--json', '--limit', '1')).stdout);
      assert.deepEqual(json.queues[0].count, 1);
      assert.equal(json.queues[0].more, true);
      // Listed and replayed in the order they died; the two fail side by side, so either may be first.
      const first: string = json.queues[0].messages[0].messageId;
      assert.ok(['dead-0', 'dead-1'].includes(first), first);
      const second = first === 'dead-0' ? 'dead-1' : 'dead-0';

      const replayed = await ops(target.env, 'dead-letters', 'replay', 'workflows.sync-chunks', '--limit', '1');
      assert.equal(replayed.code, 0, replayed.stderr);
      assert.equal(replayed.stdout.trim(), 'Replayed 1 dead letter of workflows.sync-chunks onto the queue.');

      const bus = await target.open();
      try {
        assert.deepEqual(
          (await bus.deadLetters(CHUNKS_QUEUE)).map((m) => m.messageId),
          [second],
        );
        const seen: Array<[string, string | undefined]> = [];
        const sub = await bus.consume(CHUNKS_QUEUE, async (_body, delivery, envelope) => {
          seen.push([delivery.messageId, envelope?.headers['x-replay']]);
        });
        for (let i = 0; i < 200 && seen.length === 0; i++) await sleep(25);
        await sub.close();
        assert.deepEqual(seen, [[first, '1']], 'back on its queue, marked as a replay');
      } finally {
        await bus.close();
      }
    });

    it('refuses an unknown queue or command (exit 2, naming the work queues)', async () => {
      const unknown = await ops(target.env, 'dead-letters', 'replay', 'nope');
      assert.equal(unknown.code, 2);
      assert.match(
        unknown.stderr,
        /unknown queue nope; the work queues are tokens\.usage-totals, tokens\.usage, workflows\.sync-chunks, workflows\.job-events, compute\.forecast-chunks, compute\.supply-plan-chunks/,
      );
      assert.equal((await ops(target.env, 'dead-letters', 'replay', 'workflows.sync-chunks', '--limit', '0')).code, 2);
      assert.equal((await ops(target.env, 'jobs', 'list')).code, 2);
    });
  });
}

cliContract('embedded bus', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ops-cli-'));
  let store: Store | undefined;
  return {
    env: { DATA_DIR: dir, BUS_NAMESPACE: 'ops-test' },
    open: async () => {
      store = await openStore({ database: 'bus', dataDir: dir });
      const bus = await openBus({
        store,
        namespace: 'ops-test',
        maxDeliveries: 2,
        redeliveryDelayMs: 5,
        pollIntervalMs: 20,
        logger: createLogger('silent'),
      });
      const opened = store;
      return { ...bus, close: async () => (await bus.close(), await opened.close()) } as Bus;
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('ops CLI on RabbitMQ', function () {
  before(function () {
    skipUnless(this, 'AMQP', AMQP_URL ? null : 'AMQP_URL is not set');
  });
  if (!AMQP_URL) return;
  cliContract('RabbitMQ', () => {
    const namespace = `ops-${randomBytes(4).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'ops-cli-'));
    return {
      env: { AMQP_URL, BUS_NAMESPACE: namespace, DATA_DIR: dir },
      // The server's delivery limit (the default): the CLI declares nothing, but the test's consumer does.
      open: () => openBus({ amqpUrl: AMQP_URL, namespace, redeliveryDelayMs: 5, logger: createLogger('silent') }),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  });
});

describe('ops CLI: bus unreachable', function () {
  this.timeout(60_000);
  it('exits 3 and says where to look', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ops-cli-'));
    try {
      const r = await ops({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:1', DATA_DIR: dir }, 'dead-letters', 'list');
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /the message bus is not reachable/);
      assert.doesNotMatch(r.stderr, /guest/, 'no credential in what it prints');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
