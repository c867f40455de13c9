import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePortRange } from '../support/ports';
import { skipBecause } from '../support/require';
import { api, startSystem, type TestSystem } from '../support/system';
import {
  clearMeterKeys,
  creditsOf,
  eventually,
  extraGateway,
  freshTenant,
  meterEnv,
  rateLimitOf,
  REDIS_URL,
  ScratchRedis,
  usageFolded,
} from './metering-support';

describe('metering across two gateway processes sharing Redis', function () {
  this.timeout(90_000);
  if (!REDIS_URL) {
    it.skip('skipped: REDIS_URL is not set (gateway processes share windows and balances only through Redis)');
    return;
  }
  const env = meterEnv();
  const dataDir = mkdtempSync(join(tmpdir(), 'metering-gateway-'));
  let sys: TestSystem;
  let other: Awaited<ReturnType<typeof extraGateway>>;
  before(async () => {
    sys = await startSystem({ env });
    other = await extraGateway(sys, env, dataDir);
  });
  after(async () => {
    if (other?.child.exitCode === null) {
      other.child.kill('SIGTERM');
      await once(other.child, 'exit');
    }
    await sys?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await clearMeterKeys(env);
  });

  /** `count` requests at once, alternating between the two gateways. */
  const burst = (path: string, token: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => api(i % 2 ? other : sys, path, { token })));

  it('lets exactly `limit` requests through when many run at once across both', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 50, window: 60, credits: 10_000 });
    const answers = await burst(`/${slug}/api/v1/uoms`, await token(), 200);
    const passed = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    assert.equal(passed.length, 50);
    assert.equal(limited.length, 150);
    assert.deepEqual(
      passed.map((r) => rateLimitOf(r.headers).r).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
    );
    for (const r of limited) {
      assert.equal(rateLimitOf(r.headers).r, 0);
      assert.ok(Number(r.headers.get('retry-after')) >= rateLimitOf(r.headers).t);
    }
    assert.ok(passed.some((r) => r.headers.get('ratelimit-policy') === '"default";q=50;w=60'));
  });

  it('lets exactly 10 of 100 parallel requests across both spend a balance of 10, leaving 0', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 1_000, credits: 10 });
    const t = await token();
    const answers = await burst(`/${slug}/api/v1/uoms`, t, 100);
    assert.equal(answers.filter((r) => r.status === 200).length, 10);
    assert.equal(answers.filter((r) => r.status === 402).length, 90);
    assert.equal((await creditsOf(sys, slug, t)).balance, 0);
    assert.equal((await creditsOf(other, slug, t)).balance, 0);
  });
});

describe('metering while Redis is stopped and started', function () {
  this.timeout(90_000);
  const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
  let redis: ScratchRedis;
  let sys: TestSystem | undefined;
  before(async function () {
    if (!hasRedisServer) skipBecause(this, 'no redis-server on this machine to stop and start');
    redis = new ScratchRedis(await freePortRange(1));
    await redis.start();
  });
  after(async () => {
    await sys?.stop();
    await redis?.stop();
  });

  it('refuses to spend credits (503, Retry-After), keeps free routes under a local limit, and recovers by itself', async () => {
    sys = await startSystem({ env: { REDIS_URL: redis.url, BUS_NAMESPACE: `metering-outage-${randomBytes(4).toString('hex')}` } });
    const { slug, token } = await freshTenant(sys, { rate: 4, window: 60, credits: 100 });
    const [spender, browser] = await Promise.all([token(), token()]);
    const uoms = () => api(sys!, `/${slug}/api/v1/uoms`, { token: spender });
    assert.deepEqual(
      (await Promise.all([uoms(), uoms()])).map((r) => r.status),
      [200, 200],
    );
    await usageFolded(sys, slug, (totals) => assert.equal(totals.credits, 2));

    await redis.stop();
    const started = Date.now();
    const refused = await uoms();
    assert.equal(refused.status, 503);
    assert.equal(refused.body.type, '/problems/service-unavailable');
    assert.equal(refused.headers.get('retry-after'), '2');
    const write = await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: spender, body: { name: 'Each', abbreviation: 'ea' } });
    assert.equal(write.status, 503);
    assert.ok(Date.now() - started < 2_000, `refusals took ${Date.now() - started} ms`);

    // Free routes keep answering, limited per token by this process alone.
    const free = [];
    for (let i = 0; i < 5; i++) free.push(await api(sys, `/${slug}/api/v1/tokens`, { token: browser }));
    assert.deepEqual(
      free.map((r) => r.status),
      [200, 200, 200, 200, 429],
    );
    assert.deepEqual(
      free.map((r) => rateLimitOf(r.headers).r),
      [3, 2, 1, 0, 0],
    );
    assert.equal(free[0]!.headers.get('credits-remaining'), null);
    assert.ok(Number(free[4]!.headers.get('retry-after')) >= rateLimitOf(free[4]!.headers).t);
    // The balance shown without the meter is the usage records': nothing was spent meanwhile.
    const shown = await creditsOf(sys, slug, spender);
    assert.deepEqual([shown.balance, shown.used], [98, 2]);

    // Redis comes back empty (no persistence): the balance is rebuilt, nothing given away.
    await redis.start();
    const back = await eventually(uoms, (res) => assert.equal(res.status, 200, res.text), 15_000);
    assert.equal(back.headers.get('credits-remaining'), '97');
    assert.equal(rateLimitOf(back.headers).r, 3, 'a fresh window on the restarted Redis');
  });
});
