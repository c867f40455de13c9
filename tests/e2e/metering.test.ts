import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { api, startSystem, type TestSystem } from '../support/system';
import { clearMeterKeys, creditsOf as credits, eventually, freshTenant, meterEnv, rateLimitOf, usageFolded } from './metering-support';

describe('metering: rate limits, credits and usage', function () {
  this.timeout(60_000);
  const env = meterEnv();
  let sys: TestSystem;
  before(async () => {
    sys = await startSystem({ env });
  });
  after(async () => {
    await sys?.stop();
    await clearMeterKeys(env);
  });

  it('answers with RateLimit-Policy, RateLimit and Credits-Remaining that match the limits and the balance', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 10, window: 30, credits: 1_000 });
    const t = await token();
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await api(sys, `/${slug}/api/v1/uoms`, { token: t }));
    assert.deepEqual(
      reads.map((r) => r.status),
      [200, 200, 200],
    );
    assert.ok(reads.every((r) => r.headers.get('ratelimit-policy') === '"default";q=10;w=30'));
    assert.deepEqual(
      reads.map((r) => rateLimitOf(r.headers).r),
      [9, 8, 7],
    );
    assert.ok(reads.every((r) => rateLimitOf(r.headers).t >= 1 && rateLimitOf(r.headers).t <= 30));
    assert.deepEqual(
      reads.map((r) => r.headers.get('credits-remaining')),
      ['999', '998', '997'],
    );

    const write = await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: t, body: { name: 'Each', abbreviation: 'ea' } });
    assert.equal(write.status, 201, write.text);
    assert.equal(write.headers.get('credits-remaining'), '995', 'a write costs 2');

    const missing = await api(sys, `/${slug}/api/v1/items/999999`, { token: t });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('credits-remaining'), '995', 'a request the service refuses (404) is refunded');
    assert.equal(rateLimitOf(missing.headers).r, 6, 'and gives its rate token back');

    const tokens = await api(sys, `/${slug}/api/v1/tokens`, { token: t });
    assert.equal(tokens.status, 200);
    assert.equal(tokens.headers.get('credits-remaining'), '995', 'utilities cost nothing');
    assert.equal(rateLimitOf(tokens.headers).r, 5, 'but take a rate token');

    const shown = await api(sys, `/${slug}/api/v1/credits`, { token: t });
    assert.equal(shown.headers.get('credits-remaining'), String(shown.body.data[0].balance));
    assert.equal(shown.body.data[0].balance, 995);
    assert.equal(shown.body.data[0].allowance, 1_000);
  });

  it('lets exactly 10 of 100 parallel requests spend a balance of 10, and the balance ends at 0', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 1_000, credits: 10 });
    const t = await token();
    const answers = await Promise.all(Array.from({ length: 100 }, () => api(sys, `/${slug}/api/v1/uoms`, { token: t })));
    const passed = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 402);
    assert.equal(passed.length, 10);
    assert.equal(refused.length, 90);
    assert.deepEqual(
      passed.map((r) => Number(r.headers.get('credits-remaining'))).sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.ok(refused.every((r) => r.body.type === '/problems/credits-exhausted' && r.headers.get('credits-remaining') === '0'));
    assert.match(refused[0]!.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal((await credits(sys, slug, t)).balance, 0);
    // Refusals took no rate tokens: 10 spends and the /credits read above.
    assert.equal(rateLimitOf((await api(sys, `/${slug}/api/v1/tokens`, { token: t })).headers).r, 1_000 - 12);
  });

  it('spends nothing on a request refused for any reason (401, 403, 422, 429), and records none', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 3, window: 60, credits: 100 });
    const [reader, writeOnly, watcher] = await Promise.all([token(['public_api.read']), token(['public_api.write']), token()]);
    const uoms = (query = '', t = reader) => api(sys, `/${slug}/api/v1/uoms${query}`, { token: t });

    assert.equal((await api(sys, `/${slug}/api/v1/uoms`, { token: `${reader}x` })).status, 401);
    assert.equal((await api(sys, `/demo/api/v1/uoms`, { token: reader })).status, 401, "another workspace's path");
    const forbidden = await uoms('', writeOnly);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.headers.get('ratelimit'), null);
    const invalid = await uoms('?per_page=0');
    assert.equal(invalid.status, 422);
    assert.equal(invalid.headers.get('credits-remaining'), null);

    const served = [await uoms(), await uoms(), await uoms()];
    assert.deepEqual(
      served.map((r) => r.status),
      [200, 200, 200],
    );
    const limited = await uoms();
    assert.equal(limited.status, 429);
    assert.equal(limited.body.type, '/problems/rate-limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= rateLimitOf(limited.headers).t);
    assert.equal(rateLimitOf(limited.headers).r, 0);
    assert.equal(limited.headers.get('credits-remaining'), '97');

    assert.equal((await credits(sys, slug, watcher)).balance, 97);
    await usageFolded(sys, slug, (totals) => assert.equal(totals.requests, 4));
    const usage = await api(sys, `/${slug}/api/v1/usage?group_by=endpoint`, { token: watcher });
    assert.deepEqual(
      usage.body.data.map((r: { method: string; endpoint: string; requests: number; credits: number }) => [
        r.method,
        r.endpoint,
        r.requests,
        r.credits,
      ]),
      [
        ['GET', '/credits', 1, 0],
        ['GET', '/uoms', 3, 3],
      ],
    );
  });

  it('records every metered request: GET /usage sums per day, endpoint and token match, and so does GET /credits', async () => {
    const { slug, token } = await freshTenant(sys, { credits: 500 });
    const [a, b] = await Promise.all([token(), token()]);
    const [idA, idB] = [a, b].map((t) => Number(t.split('|')[0]));
    for (let i = 0; i < 3; i++) await api(sys, `/${slug}/api/v1/uoms`, { token: a });
    await api(sys, `/${slug}/api/v1/items/999999`, { token: a });
    await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: b, body: { name: 'Case', abbreviation: 'cs' } });
    await api(sys, `/${slug}/api/v1/uoms`, { token: b });

    const today = new Date().toISOString().slice(0, 10);
    // The 404 is recorded with cost 0: it was refunded.
    await usageFolded(sys, slug, (totals) => assert.deepEqual(totals, { requests: 6, credits: 6 }));
    const all = await api(sys, `/${slug}/api/v1/usage`, { token: a });
    assert.deepEqual(
      all.body.data.map((r: Record<string, unknown>) => [r.day, r.method, r.endpoint, r.token_id, r.requests, r.credits]),
      [
        [today, 'GET', '/items/{id}', idA, 1, 0],
        [today, 'GET', '/uoms', idA, 3, 3],
        [today, 'GET', '/uoms', idB, 1, 1],
        [today, 'POST', '/uoms', idB, 1, 2],
      ],
    );
    assert.equal(all.body.data[0].token_name, 'test *');
    assert.deepEqual(all.body.meta, {
      from: `${today.slice(0, 7)}-01`,
      to: today,
      group_by: ['day', 'endpoint', 'token'],
      totals: { requests: 6, credits: 6 },
    });

    const byToken = await api(sys, `/${slug}/api/v1/usage?group_by=token&from=${today}&to=${today}`, { token: a });
    assert.deepEqual(
      byToken.body.data.map((r: Record<string, unknown>) => [r.day, r.endpoint, r.token_id, r.requests, r.credits]),
      [
        [null, null, idA, 4, 3],
        [null, null, idB, 2, 3],
      ],
    );
    const shown = await credits(sys, slug, a);
    assert.deepEqual([shown.used, shown.balance], [6, 494]);

    const bad = await api(sys, `/${slug}/api/v1/usage?from=2026-02-30&group_by=week`, { token: a });
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys(bad.body.errors).sort(), ['from', 'group_by']);
    const backwards = await api(sys, `/${slug}/api/v1/usage?from=2026-05-02&to=2026-05-01`, { token: a });
    assert.deepEqual(backwards.body.errors, { to: ['The to field must be a date after or equal to from.'] });
  });

  it('applies limits set with the operator CLI on the next request', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 50, credits: 1_000 });
    const t = await token();
    assert.equal((await api(sys, `/${slug}/api/v1/uoms`, { token: t })).headers.get('ratelimit-policy'), '"default";q=50;w=60');
    await usageFolded(sys, slug, (totals) => assert.equal(totals.credits, 1));
    await sys.clients.tokens.updateTenant({ slug, rate_limit: 7, rate_window_seconds: 20, monthly_credits: 30 });
    await eventually(
      () => api(sys, `/${slug}/api/v1/tokens`, { token: t }),
      (res) => assert.equal(res.headers.get('ratelimit-policy'), '"default";q=7;w=20'),
      2_000,
    );
    // The new allowance less what the usage records hold, then this request.
    assert.equal((await api(sys, `/${slug}/api/v1/uoms`, { token: t })).headers.get('credits-remaining'), '28');
  });

  it('spends no credits and sends no RateLimit fields on legacy endpoints', async () => {
    const t = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    const before = (await credits(sys, 'demo', t)).balance;
    const legacy = await api(sys, '/demo/api/v1/sales?sale_type_name=History&start_date=2024-06-03&duration=7&pagination_count=5', {
      token: t,
    });
    assert.equal(legacy.status, 200, legacy.text);
    for (const field of ['ratelimit', 'ratelimit-policy', 'credits-remaining']) assert.equal(legacy.headers.get(field), null, field);
    assert.equal((await credits(sys, 'demo', t)).balance, before);
  });
});

describe('metering: a meter that lost its balances', function () {
  this.timeout(90_000);
  const env = meterEnv();
  let dataDir: string;
  let sys: TestSystem | undefined;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'metering-reset-'));
  });
  after(async () => {
    await sys?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await clearMeterKeys(env);
  });

  it('rebuilds the balance from the usage records (allowance less recorded costs), and usage survives', async () => {
    sys = await startSystem({ env, dataDir });
    const { slug, token } = await freshTenant(sys, { credits: 1_000 });
    const t = await token();
    for (let i = 0; i < 5; i++) assert.equal((await api(sys, `/${slug}/api/v1/uoms`, { token: t })).status, 200);
    await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: t, body: { name: 'Each', abbreviation: 'ea' } });
    await usageFolded(sys, slug, (totals) => assert.deepEqual(totals, { requests: 6, credits: 7 }));
    const usageBefore = await api(sys, `/${slug}/api/v1/usage`, { token: t });
    await sys.stop();
    sys = undefined;

    // A restarted process has an empty memory meter; with Redis, the balance is deleted as a flushed Redis would lose it.
    if (env.REDIS_URL) {
      const redis = createClient({ url: env.REDIS_URL });
      await redis.connect();
      const keys = await redis.keys(`${env.BUS_NAMESPACE}:cr:${slug}:*`);
      assert.equal(keys.length, 1);
      await redis.del(keys);
      await redis.quit();
    }
    sys = await startSystem({ env, dataDir });
    const shown = await credits(sys, slug, t);
    assert.deepEqual([shown.balance, shown.used], [993, 7]);
    assert.equal((await api(sys, `/${slug}/api/v1/uoms`, { token: t })).headers.get('credits-remaining'), '992');
    await usageFolded(sys, slug, (totals) => assert.deepEqual(totals, { requests: 9, credits: 8 }));
    const usageAfter = await api(sys, `/${slug}/api/v1/usage`, { token: t });
    // What was recorded before the reset, plus this process's /usage, /credits and /uoms.
    const rows = (res: typeof usageBefore) =>
      res.body.data.map((r: Record<string, unknown>) => [r.method, r.endpoint, r.requests, r.credits]);
    assert.deepEqual(rows(usageBefore), [
      ['GET', '/uoms', 5, 5],
      ['POST', '/uoms', 1, 2],
    ]);
    assert.deepEqual(rows(usageAfter), [
      ['GET', '/credits', 1, 0],
      ['GET', '/uoms', 6, 6],
      ['POST', '/uoms', 1, 2],
      ['GET', '/usage', 1, 0],
    ]);
  });
});

describe('metering: the month turns', function () {
  this.timeout(60_000);
  const env = meterEnv();
  let sys: TestSystem | undefined;
  after(async () => {
    await sys?.stop();
    await clearMeterKeys(env);
  });

  it('restores the allowance in the new period', async () => {
    // The configured clock starts 15 s before a month ends and runs on.
    const monthEnd = Date.parse('2031-01-01T00:00:00Z');
    sys = await startSystem({ env: { ...env, CLOCK_NOW: new Date(monthEnd - 15_000).toISOString() } });
    const { slug, token } = await freshTenant(sys, { credits: 3 });
    const t = await token();
    const leftMs = monthEnd - sys.config.now().getTime();
    assert.ok(leftMs > 3_000, `the system took too long to start (${leftMs} ms left)`);
    for (let i = 0; i < 3; i++) assert.equal((await api(sys, `/${slug}/api/v1/uoms`, { token: t })).status, 200);
    const spent = await api(sys, `/${slug}/api/v1/uoms`, { token: t });
    assert.equal(spent.status, 402);
    assert.equal((await credits(sys, slug, t)).period, '2030-12');

    await new Promise((resolve) => setTimeout(resolve, monthEnd - sys!.config.now().getTime() + 100));
    const renewed = await api(sys, `/${slug}/api/v1/uoms`, { token: t });
    assert.equal(renewed.status, 200);
    assert.equal(renewed.headers.get('credits-remaining'), '2');
    const now = await credits(sys, slug, t);
    assert.deepEqual(
      [now.period, now.period_start, now.period_end, now.allowance, now.balance],
      ['2031-01', '2031-01-01T00:00:00.000Z', '2031-02-01T00:00:00.000Z', 3, 2],
    );
  });
});
