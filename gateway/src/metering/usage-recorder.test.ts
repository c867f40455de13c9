import { strict as assert } from 'node:assert';
import pino from 'pino';
import type { UsageBatch, UsageRecord } from '@supply/contracts';
import { UsageRecorder } from './usage-recorder';

const record = (id: string): UsageRecord => ({
  id,
  request_id: id,
  tenant: 'demo',
  token_id: 1,
  method: 'GET',
  endpoint: '/uoms',
  cost: 1,
  status: 200,
  at: '2026-05-10T12:00:00.000Z',
});

describe('UsageRecorder', () => {
  let logs: Array<{ level: number; msg: string; lost_records?: number }>;
  const logger = () => pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  beforeEach(() => (logs = []));

  it('sends full batches at once and the rest after flushEveryMs', async () => {
    const sent: UsageBatch[] = [];
    const recorder = new UsageRecorder({ send: async (b) => void sent.push(b), logger: logger(), maxBatch: 3, flushEveryMs: 30 });
    for (const id of ['a', 'b', 'c', 'd']) recorder.record(record(id));
    assert.deepEqual(
      sent.map((b) => b.records.map((r) => r.id)),
      [['a', 'b', 'c']],
    );
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(
      sent.map((b) => b.records.map((r) => r.id)),
      [['a', 'b', 'c'], ['d']],
    );
    assert.notEqual(sent[0]!.id, sent[1]!.id);
  });

  it('retries a batch under the same id, and logs an outage once each way', async () => {
    const attempts: string[] = [];
    let failures = 2;
    const recorder = new UsageRecorder({
      send: async (b) => {
        attempts.push(b.id);
        if (failures-- > 0) throw new Error('bus unavailable');
      },
      logger: logger(),
      retryDelaysMs: [1, 1, 1],
    });
    recorder.record(record('a'));
    await recorder.drain();
    assert.equal(attempts.length, 3);
    assert.equal(new Set(attempts).size, 1);
    assert.deepEqual(
      logs.map((l) => l.msg),
      ['usage records cannot be sent to the bus; retrying', 'usage records reach the bus again'],
    );
  });

  it('counts the records it had to give up on', async () => {
    let down = true;
    const recorder = new UsageRecorder({
      send: async () => {
        if (down) throw new Error('bus unavailable');
      },
      logger: logger(),
      retryDelaysMs: [1],
    });
    recorder.record(record('a'));
    recorder.record(record('b'));
    await recorder.drain();
    down = false;
    recorder.record(record('c'));
    await recorder.drain();
    assert.equal(recorder.pending, 0);
    assert.deepEqual(
      logs.map((l) => [l.msg, l.lost_records]),
      [
        ['usage records cannot be sent to the bus; retrying', undefined],
        ['usage records are being lost: the bus has not taken them', undefined],
        ['usage records reach the bus again', 2],
      ],
    );
  });
});
