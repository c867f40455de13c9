// Issue 17 on `npm run start:distributed` (every target its own process): each target serves
// its own /metrics on METRICS_PORT + its index, and a sync's request id is in the log lines of
// the gateway, workflows and transactional processes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { skipUnless } from '../support/require';
import { freePortRange } from '../support/ports';
import { api, startDistributed, type TestSystem } from '../support/system';
import { days, salesRow, waitForJob } from './workflows-support';

/** Targets in the order of their metrics ports (as of their gRPC ports), the gateway last. */
const TARGETS = ['tokens', 'reference', 'transactional', 'compute', 'workflows', 'gateway'] as const;
type Line = Record<string, unknown>;

/** The total of the samples of `name` whose labels include `match`, in a Prometheus text exposition. */
function total(text: string, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

describe('observability of start:distributed: metrics of every target, one request id across processes', function () {
  this.timeout(240_000);
  let sys: TestSystem | undefined;
  let metricsBase: number;
  let token: string;
  const lines = (): Line[] =>
    (sys?.logs ?? []).flatMap((l) => {
      try {
        return l.startsWith('{') ? [JSON.parse(l) as Line] : [];
      } catch {
        return [];
      }
    });

  before(async function () {
    // Separate processes share the bus through RabbitMQ.
    skipUnless(this, 'AMQP', process.env.AMQP_URL ? null : 'AMQP_URL is not set');
    metricsBase = await freePortRange(6);
    // On the embedded stores: with the demo seed, FerretDB takes minutes to start (mongodb-system.test.ts covers it).
    sys = await startDistributed({ env: { METRICS_PORT: String(metricsBase), LOG_LEVEL: 'debug' }, embeddedStores: true });
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
  });
  after(async () => {
    await sys?.stop();
  });

  it("serves each target's own families on METRICS_PORT + its index, and the launcher logs where", async () => {
    const s = sys!;
    const started = lines().find((l) => l.component === 'distributed' && l.msg === 'started');
    assert.ok(started, (s.logs ?? []).slice(-20).join('\n'));
    assert.deepEqual(started.metrics, Object.fromEntries(TARGETS.map((t, i) => [t, `http://localhost:${metricsBase + i}/metrics`])));
    // Work for every service: a read (reference), a sync (workflows, transactional), a plan (compute); the token is the tokens service's.
    assert.equal((await api(s, '/demo/api/v1/items?per_page=2', { token })).status, 200);
    const sync = await api(s, '/demo/api/v1/workflows/sync-sales', {
      method: 'POST',
      token,
      body: { mode: 'upsert', data: days('2037-02-01', 2).map((d, i) => salesRow(d, i + 1)) },
    });
    assert.equal(sync.status, 202, sync.text);
    assert.equal((await waitForJob(s, 'demo', token, sync.body.data[0].job_id, 60_000)).status, 'succeeded');
    const plan = await api(s, '/demo/api/v1/supply-plans/generate', {
      method: 'POST',
      token,
      body: { mode: 'standard', item_name: 'SKU-0020', location_name: 'DC-East' },
    });
    assert.equal(plan.status, 200, plan.text.slice(0, 500));

    const scraped = new Map<string, string>();
    for (const [i, target] of TARGETS.entries()) {
      const res = await fetch(`http://127.0.0.1:${metricsBase + i}/metrics`);
      assert.equal(res.status, 200, target);
      scraped.set(target, await res.text());
    }
    for (const [target, text] of scraped) {
      assert.match(text, /^process_cpu_seconds_total /m, `${target}: default process metrics`);
      if (target === 'gateway') {
        assert.ok(
          total(text, 'supply_http_requests_total', { route: '/:tenant/api/v1/items', method: 'GET', status: '200' }) >= 1,
          'gateway: HTTP series',
        );
        assert.ok(
          total(text, 'supply_grpc_calls_total', { side: 'client', service: 'workflows', code: 'OK' }) >= 1,
          'gateway: gRPC client series',
        );
        assert.equal(total(text, 'supply_grpc_calls_total', { side: 'server' }), 0, 'the gateway serves no gRPC');
      } else {
        assert.ok(
          total(text, 'supply_grpc_calls_total', { side: 'server', service: target, code: 'OK' }) >= 1,
          `${target}: its gRPC server series`,
        );
        assert.equal(
          total(text, 'supply_grpc_calls_total', { side: 'server' }),
          total(text, 'supply_grpc_calls_total', { side: 'server', service: target }),
          `${target} serves only its own service`,
        );
        assert.equal(total(text, 'supply_http_requests_total'), 0, `${target} answers no HTTP requests`);
      }
    }
    assert.ok(
      total(scraped.get('workflows')!, 'supply_bus_messages_total', { queue: 'workflows.sync-chunks', outcome: 'acknowledged' }) >= 1,
      'workflows: its queue',
    );
  });

  it("carries a sync's X-Request-Id into the gateway's access line and the workflows and transactional processes' lines", async () => {
    const s = sys!;
    const requestId = `dist-sync-${randomBytes(4).toString('hex')}`;
    const sync = await api(s, '/demo/api/v1/workflows/sync-sales', {
      method: 'POST',
      token,
      headers: { 'X-Request-Id': requestId },
      body: { mode: 'upsert', data: days('2037-03-01', 3).map((d, i) => salesRow(d, i + 1)) },
    });
    assert.equal(sync.status, 202, sync.text);
    assert.equal(sync.headers.get('x-request-id'), requestId);
    assert.equal((await waitForJob(s, 'demo', token, sync.body.data[0].job_id, 60_000)).status, 'succeeded');
    // Each target's process by its pid, from its own start-up line.
    const targetOf = new Map(
      lines()
        .filter((l) => l.msg === 'started' && typeof l.target === 'string')
        .map((l) => [l.pid, l.target as string]),
    );
    assert.deepEqual([...targetOf.values()].sort(), [...TARGETS].sort());
    const byProcess = () => {
      const seen = new Map<string, Line[]>();
      for (const l of lines().filter((x) => x.request_id === requestId)) {
        const target = targetOf.get(l.pid) ?? `pid ${String(l.pid)}`;
        seen.set(target, [...(seen.get(target) ?? []), l]);
      }
      return seen;
    };
    // The last lines may still be on their way through the launcher's pipe.
    let seen = byProcess();
    for (let i = 0; i < 50 && !['gateway', 'workflows', 'transactional'].every((t) => seen.has(t)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = byProcess();
    }
    const access = seen.get('gateway')?.filter((l) => l.access === true) ?? [];
    assert.equal(access.length, 1, "the gateway's one access line");
    assert.equal(access[0]!.route, '/:tenant/api/v1/workflows/sync-sales');
    for (const target of ['workflows', 'transactional']) {
      const own = seen.get(target) ?? [];
      assert.ok(own.length > 0, `${target}: no line with the request id (processes with it: ${[...seen.keys()].join(', ')})`);
      assert.ok(
        own.every((l) => l.tenant === 'demo'),
        `${target}: with its tenant`,
      );
    }
  });
});
