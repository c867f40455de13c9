import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, MemoryMeter, openBus, openStore, type Bus, type Store } from '@supply/kit';
import { RECORDS_USAGE_QUEUE, USAGE_QUEUE, creditPeriodByKey } from '@supply/contracts';
import type { IdentityStore } from '../repository';
import { UsageLedger } from './ledger';
import { openUsageStore } from './repository';
import { startUsageFolding } from './service';

describe('tokens: usage folding from the bus', function () {
  this.timeout(20_000);
  let dir: string;
  let store: Store;
  let bus: Bus;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'usage-folding-'));
    store = await openStore({ database: 'tokens', dataDir: dir });
    bus = await openBus({ store, namespace: 'usage-folding', pollIntervalMs: 20, logger: createLogger('silent') });
  });
  afterEach(async () => {
    await bus.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("folds the gateways' totals, and the per-request records earlier gateways left on their own queue", async () => {
    const ledger = new UsageLedger(await openUsageStore(store));
    const stop = await startUsageFolding({
      identity: {} as IdentityStore,
      ledger,
      meter: new MemoryMeter(),
      now: () => new Date('2026-05-20T00:00:00Z'),
      bus,
      logger: createLogger('silent'),
    });
    try {
      const total = {
        tenant: 'demo',
        day: '2026-05-10',
        method: 'GET',
        endpoint: '/uoms',
        token_id: 1,
        requests: 3,
        credits: 3,
        errors: 0,
      };
      await bus.send(USAGE_QUEUE, { id: 'totals-1', totals: [total] }, { messageId: 'totals-1' });
      const record = {
        id: 'r1',
        request_id: 'q1',
        tenant: 'demo',
        token_id: 1,
        method: 'POST',
        endpoint: '/items',
        cost: 2,
        status: 201,
        at: '2026-05-11T08:00:00.000Z',
      };
      await bus.send(RECORDS_USAGE_QUEUE, { id: 'records-1', records: [record] }, { messageId: 'records-1' });
      const deadline = Date.now() + 10_000;
      while ((await ledger.used('demo', creditPeriodByKey('2026-05')!)) !== 5) {
        if (Date.now() > deadline) throw new Error('both batches were not folded');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(await ledger.report('demo', '2026-05-01', '2026-05-31', ['endpoint']), [
        { day: null, method: 'POST', endpoint: '/items', token_id: null, requests: 1, credits: 2 },
        { day: null, method: 'GET', endpoint: '/uoms', token_id: null, requests: 3, credits: 3 },
      ]);
    } finally {
      await stop();
    }
  });
});
