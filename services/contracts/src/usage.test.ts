import { strict as assert } from 'node:assert';
import { isUsageBatch, type UsageTotal } from './usage';

const total = (fields: Partial<UsageTotal> = {}): UsageTotal => ({
  tenant: 'demo',
  day: '2026-05-10',
  method: 'GET',
  endpoint: '/uoms',
  token_id: 1,
  requests: 3,
  credits: 3,
  errors: 1,
  ...fields,
});

const record = {
  id: 'r1',
  request_id: 'q1',
  tenant: 'demo',
  token_id: 1,
  method: 'GET',
  endpoint: '/uoms',
  cost: 1,
  status: 200,
  at: '2026-05-10T12:00:00.000Z',
};

describe('contracts: usage batches', () => {
  it('takes a batch of totals (what gateways send) or of records (what earlier gateways sent)', () => {
    assert.ok(isUsageBatch({ id: 'b1', totals: [total(), total({ token_id: 2, errors: 0, credits: 0 })] }));
    assert.ok(isUsageBatch({ id: 'b2', records: [record] }));
  });

  it('refuses what it cannot fold exactly', () => {
    const bad: unknown[] = [
      { id: 'b', totals: [total()], records: [record] },
      { id: 'b' },
      { id: '', totals: [total()] },
      { id: 'b', totals: [total({ requests: 0, credits: 0, errors: 0 })] },
      { id: 'b', totals: [total({ errors: 4 })] },
      { id: 'b', totals: [total({ credits: -1 })] },
      { id: 'b', totals: [total({ credits: 1.5 })] },
      { id: 'b', totals: [total({ day: '2026-05-10T00:00:00Z' })] },
      { id: 'b', totals: [total({ tenant: '' })] },
      { id: 'b', totals: [total({ token_id: Number.NaN })] },
      { id: 'b', totals: Array.from({ length: 1_001 }, () => total()) },
    ];
    for (const batch of bad) assert.equal(isUsageBatch(batch), false, JSON.stringify(batch).slice(0, 120));
  });
});
