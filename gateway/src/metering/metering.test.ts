import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { z } from 'zod';
import { AppError, MemoryMeter, NotFoundError, type Meter } from '@supply/kit';
import type { MeteredUse } from './usage-recorder';
import { createApp } from '../app';
import { defineRoute, q, type Access, type RouteDef } from '../http/routes';
import { createMeteringHook, endpointOf, OUTAGE_RETRY_AFTER_SECONDS, type MeteringOptions } from './metering';

/** The app's two metering options from one hook pair. */
const meteringHooks = (options: MeteringOptions) => {
  const { hook, refund } = createMeteringHook(options);
  return { meter: hook, refund };
};
import { TenantPolicies, type TenantLimits } from './policies';

const token = (cost: 'read' | 'compute' | 'utility'): Access => ({ kind: 'token', scope: null, module: null, level: 'view', cost });

/** A meter that can be taken down: while down every call fails as an unreachable Redis does. */
class FlakyMeter extends MemoryMeter {
  down = false;
  calls = 0;
  override async check(...args: Parameters<Meter['check']>) {
    this.calls++;
    if (this.down) throw new AppError('unavailable', 'Redis meter unavailable: connection refused');
    return super.check(...args);
  }
}

interface Harness {
  url: string;
  meter: FlakyMeter;
  records: MeteredUse[];
  logs: Array<{ level: number; msg: string }>;
  limits: TenantLimits;
  used: number;
  clock: { ms: number };
  at: { now: Date };
  get(path: string, tokenId?: number | null, method?: string): Promise<Response>;
  close(): Promise<void>;
}

async function harness(options: { limits?: Partial<TenantLimits>; used?: number; legacyLimit?: number } = {}): Promise<Harness> {
  const clock = { ms: 1_000 };
  const at = { now: new Date('2026-05-10T12:00:00Z') };
  const meter = new FlakyMeter({ now: () => clock.ms });
  const records: MeteredUse[] = [];
  const logs: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const h = { limits: { rateLimit: 5, rateWindowSeconds: 60, monthlyCredits: 100, ...options.limits }, used: options.used ?? 0 };
  const policies = new TenantPolicies({
    fetchLimits: async () => ({ ...h.limits }),
    fetchUsed: async () => h.used,
    clock: () => clock.ms,
  });
  const routes: RouteDef[] = [
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/things',
      summary: 'a read',
      tag: 't',
      access: token('read'),
      dialect: 'current',
      query: z.object({ per_page: q.int(1, 10).optional(), missing: z.string().optional() }),
      async handler({ query }) {
        if (query.missing) throw new NotFoundError('No such thing.');
        return { kind: 'envelope', data: [] };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/:tenant/api/v1/things/:id/compute',
      summary: 'a compute',
      tag: 't',
      access: token('compute'),
      dialect: 'current',
      handler: async () => ({ kind: 'envelope', data: [] }),
    }),
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/credits',
      summary: 'a utility',
      tag: 't',
      access: token('utility'),
      dialect: 'current',
      handler: async () => ({ kind: 'envelope', data: [] }),
    }),
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/old',
      summary: 'a legacy read',
      tag: 't',
      access: { kind: 'legacy', module: null, level: 'view' },
      dialect: 'legacy',
      handler: async () => ({ kind: 'json', body: { success: true } }),
    }),
  ];
  const app = createApp({
    logger,
    routes,
    // Stands in for authentication: `X-Token: <id>` is a token of tenant demo.
    guard: async (route, req, res) => {
      if (route.access.kind === 'none') return;
      const id = Number(req.get('X-Token'));
      if (!id) throw new AppError('unauthenticated', 'Unauthenticated.');
      res.locals.principal = { tenant: 'demo', token_id: id };
    },
    ...meteringHooks({
      meter,
      policies,
      record: (r) => records.push(r),
      logger,
      now: () => at.now,
      clock: () => clock.ms,
      retryMeterAfterMs: 1_000,
      legacyCeiling: { limit: options.legacyLimit ?? 600, windowSeconds: 60 },
    }),
    readiness: async () => ({}),
    bodyLimitKb: 64,
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(h, {
    url,
    meter,
    records,
    logs,
    clock,
    at,
    async get(path: string, tokenId: number | null = 1, method = 'GET') {
      const headers: Record<string, string> = { Accept: 'application/json' };
      if (tokenId !== null) headers['X-Token'] = String(tokenId);
      const res = await fetch(`${url}/demo/api/v1${path}`, { method, headers });
      await res.arrayBuffer();
      // The usage record is handed over when the response closes.
      await new Promise((resolve) => setImmediate(resolve));
      return res;
    },
    async close() {
      server.close();
      await meter.close();
    },
  });
}

const rateLimit = (res: Response) => {
  const m = /^"default";r=(\d+);t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '');
  return m ? { r: Number(m[1]), t: Number(m[2]) } : null;
};

describe('metering', () => {
  let h: Harness;
  afterEach(() => h?.close());

  it('answers with RateLimit, RateLimit-Policy and Credits-Remaining, and gives back what a refused request spent', async () => {
    h = await harness();
    const ok = await h.get('/things');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('ratelimit-policy'), '"default";q=5;w=60');
    assert.deepEqual(rateLimit(ok), { r: 4, t: 60 });
    assert.equal(ok.headers.get('credits-remaining'), '99');

    const missing = await h.get('/things?missing=1');
    assert.equal(missing.status, 404);
    assert.deepEqual(rateLimit(missing), { r: 4, t: 60 }, 'the rate slot is given back');
    assert.equal(missing.headers.get('credits-remaining'), '99', 'a request the service refused spends nothing');

    const compute = await h.get('/things/7/compute', 1, 'POST');
    assert.equal(compute.headers.get('credits-remaining'), '79');
    assert.deepEqual(
      h.records.map((r) => [r.method, r.endpoint, r.cost, r.status, r.token_id, r.tenant]),
      [
        ['GET', '/things', 1, 200, 1, 'demo'],
        ['GET', '/things', 0, 404, 1, 'demo'],
        ['POST', '/things/{id}/compute', 20, 200, 1, 'demo'],
      ],
    );
    assert.ok(h.records.every((r) => r.at.toISOString() === '2026-05-10T12:00:00.000Z'));
  });

  it('refuses past the limit with 429 problem+json and a Retry-After not before the reset, spending nothing', async () => {
    h = await harness({ limits: { rateLimit: 3 } });
    for (let i = 0; i < 3; i++) assert.equal((await h.get('/things')).status, 200);
    h.clock.ms += 10_500;
    const refused = await h.get('/things');
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const { t, r } = rateLimit(refused)!;
    assert.equal(r, 0);
    assert.equal(t, 50);
    assert.ok(Number(refused.headers.get('retry-after')) >= t);
    assert.equal(refused.headers.get('credits-remaining'), '97');
    assert.equal(h.records.length, 3, 'a refused request leaves no usage record');
    // Another token has its own window.
    assert.equal((await h.get('/things', 2)).status, 200);
    h.clock.ms += 50_000;
    assert.deepEqual(rateLimit(await h.get('/things')), { r: 2, t: 60 });
  });

  it('answers 402 credits-exhausted when the balance cannot cover the cost, spending nothing', async () => {
    h = await harness({ limits: { monthlyCredits: 25 } });
    assert.equal((await h.get('/things/1/compute', 1, 'POST')).headers.get('credits-remaining'), '5');
    const refused = await h.get('/things/1/compute', 1, 'POST');
    assert.equal(refused.status, 402);
    const body = (await (
      await fetch(`${h.url}/demo/api/v1/things/1/compute`, { method: 'POST', headers: { 'X-Token': '1', Accept: 'application/json' } })
    ).json()) as { type: string };
    assert.equal(body.type, '/problems/credits-exhausted');
    assert.equal(refused.headers.get('credits-remaining'), '5');
    assert.deepEqual(rateLimit(refused), { r: 4, t: 60 }, 'a credit refusal takes no rate token either');
    assert.equal((await h.get('/things')).headers.get('credits-remaining'), '4');
    assert.equal((await h.get('/credits')).status, 200, 'free routes still answer');
  });

  it('spends nothing on requests refused before it: authentication and validation', async () => {
    h = await harness();
    const anonymous = await h.get('/things', null);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('ratelimit'), null);
    const invalid = await h.get('/things?per_page=0');
    assert.equal(invalid.status, 422);
    assert.equal(invalid.headers.get('ratelimit'), null);
    assert.equal(h.meter.calls, 0);
    assert.equal(h.records.length, 0);
    assert.equal((await h.get('/things')).headers.get('credits-remaining'), '99');
  });

  it('spends no credits on legacy endpoints and sends no RateLimit fields, up to the abuse ceiling', async () => {
    h = await harness({ legacyLimit: 3 });
    for (let i = 0; i < 3; i++) {
      const res = await h.get('/old');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit'), null);
      assert.equal(res.headers.get('ratelimit-policy'), null);
      assert.equal(res.headers.get('credits-remaining'), null);
    }
    const refused = await h.get('/old');
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 59);
    assert.equal(refused.headers.get('ratelimit'), null);
    assert.deepEqual(
      h.records.map((r) => r.cost),
      [0, 0, 0],
    );
    assert.equal((await h.get('/things')).headers.get('credits-remaining'), '99', 'the ceiling is its own window');
  });

  it('starts a period the meter holds no balance for at the allowance less the recorded use', async () => {
    h = await harness({ used: 40 });
    assert.equal((await h.get('/things')).headers.get('credits-remaining'), '59');
  });

  it('restores the allowance when the calendar month (UTC) turns', async () => {
    h = await harness({ limits: { monthlyCredits: 21 } });
    h.at.now = new Date('2026-05-31T23:59:59.900Z');
    assert.equal((await h.get('/things/1/compute', 1, 'POST')).headers.get('credits-remaining'), '1');
    assert.equal((await h.get('/things/1/compute', 1, 'POST')).status, 402);
    h.at.now = new Date('2026-06-01T00:00:00.000Z');
    assert.equal((await h.get('/things/1/compute', 1, 'POST')).headers.get('credits-remaining'), '1');
    assert.deepEqual(
      h.records.map((r) => r.at.toISOString()),
      ['2026-05-31T23:59:59.900Z', '2026-06-01T00:00:00.000Z'],
    );
  });

  it('while the meter is unreachable: 503 where credits are spent, local limits on free routes, logged once, back by itself', async () => {
    h = await harness({ limits: { rateLimit: 3 } });
    assert.equal((await h.get('/things')).status, 200);
    h.meter.down = true;

    const spend = await h.get('/things');
    assert.equal(spend.status, 503);
    assert.equal(spend.headers.get('retry-after'), String(OUTAGE_RETRY_AFTER_SECONDS));
    const problem = (await (
      await fetch(`${h.url}/demo/api/v1/things`, { headers: { 'X-Token': '1', Accept: 'application/json' } })
    ).json()) as { type: string };
    assert.equal(problem.type, '/problems/service-unavailable');

    const free = [await h.get('/credits'), await h.get('/credits'), await h.get('/credits'), await h.get('/credits')];
    assert.deepEqual(
      free.map((r) => r.status),
      [200, 200, 200, 429],
    );
    assert.deepEqual(
      free.map((r) => rateLimit(r)?.r),
      [2, 1, 0, 0],
    );
    assert.ok(free.every((r) => r.headers.get('ratelimit-policy') === '"default";q=3;w=60'));
    assert.equal(free[0]!.headers.get('credits-remaining'), null, 'no balance to show without the meter');
    assert.equal(h.meter.calls, 2, 'one failed call starts the outage; the rest go straight to the fallback');

    h.clock.ms += 1_000;
    assert.equal((await h.get('/things')).status, 503, 'one request per retry interval tries the meter again');
    assert.equal(h.meter.calls, 3);

    h.meter.down = false;
    h.clock.ms += 1_000;
    const back = await h.get('/things');
    assert.equal(back.status, 200);
    assert.equal(back.headers.get('credits-remaining'), '98', 'nothing was spent or given away during the outage');
    const meterLogs = h.logs.filter((l) => /meter/.test(l.msg)).map((l) => [l.level, l.msg.split(':')[0]]);
    assert.deepEqual(meterLogs, [
      [40, 'meter unavailable'],
      [30, 'meter reachable again'],
    ]);
    assert.deepEqual(
      h.records.map((r) => [r.endpoint, r.status]),
      [
        ['/things', 200],
        ['/credits', 200],
        ['/credits', 200],
        ['/credits', 200],
        ['/things', 200],
      ],
    );
  });
});

describe('endpointOf', () => {
  it('names a route by its pattern below the API prefix', () => {
    assert.equal(endpointOf('/:tenant/api/v1/items/:id'), '/items/{id}');
    assert.equal(endpointOf('/:tenant/api/v1/sales-data'), '/sales-data');
  });
});
