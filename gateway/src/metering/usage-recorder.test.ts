import { strict as assert } from 'node:assert';
import pino from 'pino';
import { isUsageBatch, type UsageBatch } from '@supply/contracts';
import { UsageRecorder, type MeteredUse } from './usage-recorder';

const use = (fields: Partial<MeteredUse> = {}): MeteredUse => ({
  tenant: 'demo',
  token_id: 1,
  method: 'GET',
  endpoint: '/uoms',
  cost: 1,
  status: 200,
  at: new Date('2026-05-10T12:00:00.000Z'),
  ...fields,
});
const record = (endpoint: string) => use({ endpoint: `/${endpoint}` });

describe('UsageRecorder', () => {
  let logs: Array<{ level: number; msg: string; lost_requests?: number }>;
  const logger = () => pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  beforeEach(() => (logs = []));

  it('sums requests per tenant, UTC day, method, endpoint and token, and sends batches the tokens service takes', async () => {
    const sent: UsageBatch[] = [];
    const recorder = new UsageRecorder({ send: async (b) => void sent.push(b), logger: logger(), flushEveryMs: 20 });
    recorder.record(use());
    recorder.record(use({ status: 404 }));
    recorder.record(use({ cost: 0, status: 499 }));
    recorder.record(use({ at: new Date('2026-05-10T23:59:59.999Z') }));
    recorder.record(use({ at: new Date('2026-05-11T00:00:00.000Z'), cost: 2 }));
    recorder.record(use({ token_id: 2 }));
    recorder.record(use({ method: 'POST', cost: 2, status: 201 }));
    recorder.record(use({ tenant: 'acme', cost: 20 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(sent.length, 1);
    assert.ok(isUsageBatch(sent[0]));
    assert.deepEqual(sent[0]!.totals, [
      { tenant: 'demo', day: '2026-05-10', method: 'GET', endpoint: '/uoms', token_id: 1, requests: 4, credits: 3, errors: 2 },
      { tenant: 'demo', day: '2026-05-11', method: 'GET', endpoint: '/uoms', token_id: 1, requests: 1, credits: 2, errors: 0 },
      { tenant: 'demo', day: '2026-05-10', method: 'GET', endpoint: '/uoms', token_id: 2, requests: 1, credits: 1, errors: 0 },
      { tenant: 'demo', day: '2026-05-10', method: 'POST', endpoint: '/uoms', token_id: 1, requests: 1, credits: 2, errors: 0 },
      { tenant: 'acme', day: '2026-05-10', method: 'GET', endpoint: '/uoms', token_id: 1, requests: 1, credits: 20, errors: 0 },
    ]);
  });

  it('sends a batch at once when it holds maxBatch totals, the rest after flushEveryMs, however many requests they count', async () => {
    const sent: UsageBatch[] = [];
    const recorder = new UsageRecorder({ send: async (b) => void sent.push(b), logger: logger(), maxBatch: 3, flushEveryMs: 30 });
    for (const id of ['a', 'a', 'a', 'a', 'a', 'b', 'c', 'd', 'd', 'e']) recorder.record(record(id));
    const counted = () => sent.map((b) => b.totals!.map((t) => `${t.endpoint}×${t.requests}`));
    assert.deepEqual(counted(), [['/a×5', '/b×1', '/c×1']]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(counted(), [
      ['/a×5', '/b×1', '/c×1'],
      ['/d×2', '/e×1'],
    ]);
    assert.equal(new Set(sent.map((b) => b.id)).size, 2);
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
      ['usage counts cannot be sent to the bus; retrying', 'usage counts reach the bus again'],
    );
  });

  it('counts the requests it had to give up on', async () => {
    let down = true;
    const recorder = new UsageRecorder({
      send: async () => {
        if (down) throw new Error('bus unavailable');
      },
      logger: logger(),
      retryDelaysMs: [1],
    });
    recorder.record(record('a'));
    recorder.record(record('a'));
    recorder.record(record('b'));
    await recorder.drain();
    down = false;
    recorder.record(record('c'));
    await recorder.drain();
    assert.equal(recorder.pending, 0);
    assert.deepEqual(
      logs.map((l) => [l.msg, l.lost_requests]),
      [
        ['usage counts cannot be sent to the bus; retrying', undefined],
        ['usage counts are being lost: the bus has not taken them', undefined],
        ['usage counts reach the bus again', 3],
      ],
    );
  });
});
