import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { openStore } from '@supply/kit';
import { missingBackend } from '../support/require';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const writerScript = fileURLToPath(new URL('./fixtures/store-writer.ts', import.meta.url));
const ACKS_BEFORE_KILL = 400;

interface Acknowledged {
  id: number;
  token: string;
}

/** Runs the writer child until it has acknowledged `ACKS_BEFORE_KILL` writes, then SIGKILLs it mid-stream. */
async function writeThenKill(dataDir: string, database: string, mongodbUrl: string | undefined): Promise<Acknowledged[]> {
  const env = { ...process.env };
  if (mongodbUrl) env['MONGODB_URL'] = mongodbUrl;
  else delete env['MONGODB_URL'];
  const child = spawn(process.execPath, ['--import', 'tsx', writerScript, dataDir, database], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const acknowledged: Acknowledged[] = [];
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const [id, token] = line.split(' ');
    acknowledged.push({ id: Number(id), token: token! });
    if (acknowledged.length === ACKS_BEFORE_KILL) child.kill('SIGKILL');
  });
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  assert.equal(signal, 'SIGKILL', `writer exited on its own (code ${code}): ${stderr}`);
  return acknowledged;
}

function crashSuite(name: string, mongodbUrl: string | undefined): void {
  describe(`Store crash: ${name}`, function () {
    this.timeout(120_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'store-crash-'));
    const database = `store_crash_${process.pid}_${Date.now().toString(36)}`;
    after(async () => {
      rmSync(dataDir, { recursive: true, force: true });
      if (!mongodbUrl) return;
      const client = new MongoClient(mongodbUrl);
      try {
        await client.db(`supply_${database}`).dropDatabase();
      } finally {
        await client.close();
      }
    });

    it('keeps every write acknowledged before a SIGKILL, and hands out no id twice afterwards', async () => {
      const acknowledged = await writeThenKill(dataDir, database, mongodbUrl);
      assert.ok(acknowledged.length >= ACKS_BEFORE_KILL, `only ${acknowledged.length} acknowledgements`);
      const store = await openStore({ database, dataDir, mongodbUrl });
      try {
        const writes = await store.collection({
          name: 'crash_writes',
          autoIncrement: true,
          indexes: [{ name: 'token', keys: [['token', 1]], unique: true }],
        });
        const missing: string[] = [];
        for (const { id, token } of acknowledged) {
          const found = await writes.findById(id);
          if (found?.['token'] !== token) missing.push(`${id} ${token}`);
        }
        assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged writes lost`);
        const stored = await writes.count({});
        assert.ok(stored >= acknowledged.length, `${stored} stored < ${acknowledged.length} acknowledged`);
        const after = await writes.insertMany(Array.from({ length: 20 }, (_, i) => ({ token: `after-${i}` })));
        const highest = Math.max(...acknowledged.map((ack) => ack.id));
        assert.ok(
          after.every((document) => (document._id as number) > highest),
          'the sequence resumes above every acknowledged id',
        );
      } finally {
        await store.close();
      }
    });
  });
}

describe('Store crash', () => {
  crashSuite('embedded', undefined);
  const mongodbUrl = process.env.MONGODB_URL;
  if (mongodbUrl) {
    crashSuite('mongodb', mongodbUrl);
  } else {
    describe('Store crash: mongodb', () => missingBackend('MONGODB', 'MONGODB_URL is not set'));
  }
});
