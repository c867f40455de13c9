import { strict as assert } from 'node:assert';
import { createLogger, type Bus } from '@supply/kit';
import { ACCESS_CHANGED } from '@supply/contracts';
import { TenantPolicies, type MeteringPolicy, type TenantLimits } from './policies';

const silent = createLogger('silent');

describe('TenantPolicies', () => {
  let clock: number;
  let limits: TenantLimits;
  let used: number;
  let fetches: string[];
  let policies: TenantPolicies;

  beforeEach(() => {
    clock = 0;
    limits = { rateLimit: 120, rateWindowSeconds: 60, monthlyCredits: 1_000 };
    used = 100;
    fetches = [];
    policies = new TenantPolicies({
      fetchLimits: async (tenant) => {
        fetches.push(`limits ${tenant}`);
        return { ...limits };
      },
      fetchUsed: async (tenant, period) => {
        fetches.push(`used ${tenant} ${period}`);
        return used;
      },
      ttlMs: 60_000,
      clock: () => clock,
    });
  });

  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('asks the tokens service once, then answers synchronously', async () => {
    const first = policies.policy('demo', '2026-05');
    assert.ok(first instanceof Promise);
    assert.deepEqual(await first, { limits, seed: 900 });
    const second = policies.policy('demo', '2026-05');
    assert.deepEqual(second, { limits, seed: 900 } satisfies MeteringPolicy);
    assert.deepEqual(fetches, ['limits demo', 'used demo 2026-05']);
  });

  it('seeds at the lowest balance seen when that is below allowance less recorded use', async () => {
    await policies.policy('demo', '2026-05');
    policies.observe('demo', '2026-05', 950);
    assert.equal((policies.policy('demo', '2026-05') as MeteringPolicy).seed, 900);
    policies.observe('demo', '2026-05', 850);
    policies.observe('demo', '2026-05', 870);
    assert.equal((policies.policy('demo', '2026-05') as MeteringPolicy).seed, 850);
    used = 5_000;
    limits.monthlyCredits = 10;
    policies.forget('demo');
    assert.equal((await policies.policy('demo', '2026-05')).seed, 0, 'never below 0');
  });

  it('refreshes in the background once the TTL has passed, answering from the cache meanwhile', async () => {
    await policies.policy('demo', '2026-05');
    clock = 60_000;
    limits.rateLimit = 10;
    assert.equal((policies.policy('demo', '2026-05') as MeteringPolicy).limits.rateLimit, 120);
    await settle();
    assert.equal((policies.policy('demo', '2026-05') as MeteringPolicy).limits.rateLimit, 10);
  });

  it('drops a tenant on its tenant-wide access-changed broadcast, not on a user-level one', async () => {
    const handlers = new Map<string, (event: unknown) => void>();
    const bus = {
      subscribe: async (topic: string, h: (event: unknown) => void) => {
        handlers.set(topic, h);
        return { close: async () => undefined };
      },
      publish: async () => undefined,
    } as unknown as Bus;
    await policies.follow(bus, silent);
    const handler = handlers.get(ACCESS_CHANGED);
    await policies.policy('demo', '2026-05');
    limits.rateLimit = 7;
    handler!({ tenant: 'demo', user_id: 3 });
    assert.equal((policies.policy('demo', '2026-05') as MeteringPolicy).limits.rateLimit, 120);
    handler!({ tenant: 'demo' });
    assert.equal((await policies.policy('demo', '2026-05')).limits.rateLimit, 7);
  });

  it('keeps no failed lookup', async () => {
    let fail = true;
    const flaky = new TenantPolicies({
      fetchLimits: async () => {
        if (fail) throw new Error('tokens unreachable');
        return limits;
      },
      fetchUsed: async () => 0,
    });
    await assert.rejects(Promise.resolve(flaky.policy('demo', '2026-05')), /tokens unreachable/);
    fail = false;
    assert.equal((await flaky.policy('demo', '2026-05')).limits.rateLimit, 120);
  });
});
