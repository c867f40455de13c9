import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients, loadConfig, type Clients } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { days, salesRow } from './workflows-support';

const MAIN = 'services/runner/src/main.ts';
const FINISHED = ['succeeded', 'partially_succeeded', 'failed'];

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (enough of the format for these families). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The total of the samples of `name` whose labels include `match`. */
export function total(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

describe('observability: metrics, access log and banner of a running all-in-one process', function () {
  this.timeout(120_000);
  let child: ChildProcess;
  let exited: Promise<number | null>;
  const lines: string[] = [];
  let dataDir: string;
  let base: number;
  let metricsPort: number;
  let baseUrl: string;
  let clients: Clients;
  let token: string;
  let seq = 0;
  /** Request ids sent, by request. */
  const sent: string[] = [];

  const json = () =>
    lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

  async function call(path: string, init: { method?: string; body?: unknown; token?: string | null } = {}) {
    const requestId = `obs-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
    sent.push(requestId);
    const headers: Record<string, string> = { Accept: 'application/json', 'X-Request-Id': requestId };
    const bearer = init.token === undefined ? token : init.token;
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${baseUrl}${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    return { status: res.status, requestId, echoed: res.headers.get('x-request-id'), body: text ? JSON.parse(text) : undefined };
  }

  async function waitJob(id: number) {
    for (let i = 0; i < 600; i++) {
      const res = await call(`/demo/api/v1/jobs/${id}`);
      const job = res.body?.data?.[0];
      if (FINISHED.includes(job?.status)) return job;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`job ${id} did not finish`);
  }

  async function scrape(): Promise<Sample[]> {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    return parseExposition(await res.text());
  }

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'supply-obs-'));
    base = await freePortRange(7);
    metricsPort = base + 6;
    baseUrl = `http://127.0.0.1:${base + 5}`;
    child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(base + 5),
        GRPC_BASE_PORT: String(base),
        METRICS_PORT: String(metricsPort),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'debug',
        BUS_NAMESPACE: `obs${base}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let partial = '';
    child.stdout!.on('data', (b) => {
      const parts = (partial + String(b)).split('\n');
      partial = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    });
    child.stderr!.on('data', (b) => lines.push(...String(b).split('\n').filter(Boolean)));
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; ; i++) {
      if (lines.some((l) => l.includes('"msg":"started"'))) break;
      if (child.exitCode !== null || i > 300) throw new Error(`did not start:\n${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    clients = createClients(loadConfig({ target: 'all', GRPC_BASE_PORT: base, DATA_DIR: dataDir }, {}));
    const ctx = { context: { requestId: 'obs-setup', tenant: 'demo' } };
    await clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, ctx);
    await clients.tokens.updateTenant(
      { slug: 'acme', rate_limit: 1, rate_window_seconds: 3600 },
      { context: { requestId: 'obs-setup', tenant: 'acme' } },
    );
    token = (await clients.tokens.createToken({ user_email: 'planner@demo.test', name: 'obs', scopes: ['*'], expires_at: '' }, ctx))
      .plain_text_token;
  });

  after(async () => {
    clients?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a start-up banner with the API, docs and metrics URLs, the targets, the backends and the demo log-in', () => {
    const banner = json().find((l) => l.msg === 'ready')?.banner;
    assert.ok(typeof banner === 'string', lines.slice(-20).join('\n'));
    assert.match(banner, new RegExp(`API +http://localhost:${base + 5}/`));
    assert.match(banner, new RegExp(`Docs +http://localhost:${base + 5}/docs`));
    assert.match(banner, new RegExp(`Metrics +http://localhost:${metricsPort}/metrics`));
    const running = /Running +(.*)/.exec(banner)?.[1]?.split(', ') ?? [];
    assert.deepEqual([...running].sort(), ['compute', 'gateway', 'reference', 'tokens', 'transactional', 'workflows']);
    assert.match(banner, /Backends +store embedded .*, bus embedded, meter embedded/);
    assert.match(banner, /planner@demo\.test/);
    assert.match(banner, /\/demo\/login/);
  });

  it('after a read, a sync and a forecast, /metrics on METRICS_PORT shows every family with live values; the API port serves no /metrics', async () => {
    const read = await call('/demo/api/v1/items?per_page=5');
    assert.equal(read.status, 200);
    assert.equal((await call('/demo/api/v1/items', { token: null })).status, 401);
    assert.equal((await call('/demo/api/v1/items', { token: 'obviously-not-a-token' })).status, 401);
    assert.equal((await call('/demo/api/v1/items?per_page=banana')).status, 422);

    const sync = await call('/demo/api/v1/workflows/sync-sales', {
      method: 'POST',
      body: { mode: 'upsert', data: days('2033-01-01', 3).map((d, i) => salesRow(d, i + 1)) },
    });
    assert.equal(sync.status, 202, JSON.stringify(sync.body));
    const syncJob = await waitJob(sync.body.data[0].job_id);
    assert.equal(syncJob.status, 'succeeded');

    const forecast = await call('/demo/api/v1/forecasts/generate', {
      method: 'POST',
      body: { item_name: 'SKU-0001', customer_group_name: 'Retail' },
    });
    assert.equal(forecast.status, 202, JSON.stringify(forecast.body));
    assert.equal((await waitJob(forecast.body.data[0].job_id)).status, 'succeeded');

    const plan = await call('/demo/api/v1/supply-plans/generate', {
      method: 'POST',
      body: { mode: 'standard', item_name: 'SKU-0020', location_name: 'DC-East' },
    });
    assert.equal(plan.status, 200, JSON.stringify(plan.body).slice(0, 500));

    // Rate limit of 1 request: the second one is refused by the meter.
    const acme = (
      await clients.tokens.createToken(
        { user_email: 'admin@acme.test', name: 'obs', scopes: ['*'], expires_at: '' },
        { context: { requestId: 'obs-setup', tenant: 'acme' } },
      )
    ).plain_text_token;
    await call('/acme/api/v1/items', { token: acme });
    assert.equal((await call('/acme/api/v1/items', { token: acme })).status, 429);

    const apiMetrics = await fetch(`${baseUrl}/metrics`);
    assert.equal(apiMetrics.status, 404, 'the public API port serves no metrics');

    const m = await scrape();
    const items = { route: '/:tenant/api/v1/items', method: 'GET' };
    assert.ok(total(m, 'supply_http_requests_total', { ...items, status: '200' }) >= 1);
    assert.ok(total(m, 'supply_http_requests_total', { ...items, status: '401' }) >= 2);
    assert.ok(total(m, 'supply_http_request_duration_seconds_count', { ...items, status: '200' }) >= 1);
    assert.ok(m.some((s) => s.name === 'supply_http_requests_in_flight'));
    assert.ok(total(m, 'supply_http_rejections_total', { reason: 'auth', route: items.route }) >= 2);
    assert.ok(total(m, 'supply_http_rejections_total', { reason: 'validation' }) >= 1);
    assert.ok(total(m, 'supply_http_rejections_total', { reason: 'rate_limit' }) >= 1);
    assert.ok(total(m, 'supply_metering_limit_rejections_total', { limit: 'rate' }) >= 1);
    assert.ok(
      m.some((s) => s.name === 'supply_metering_limit_rejections_total' && s.labels.limit === 'credits'),
      'every limit has a series',
    );
    assert.ok(total(m, 'supply_metering_credits_spent_total') >= 1);
    assert.ok(total(m, 'supply_meter_round_trip_seconds_count', { backend: 'memory', op: 'check', result: 'ok' }) >= 1);

    assert.ok(total(m, 'supply_grpc_calls_total', { side: 'client', service: 'reference', code: 'OK' }) >= 1);
    assert.ok(total(m, 'supply_grpc_calls_total', { side: 'server', service: 'reference', code: 'OK' }) >= 1);
    assert.ok(total(m, 'supply_grpc_calls_total', { side: 'server', service: 'workflows', method: 'submitSync', code: 'OK' }) >= 1);
    assert.ok(total(m, 'supply_grpc_call_duration_seconds_count', { side: 'client', service: 'transactional' }) >= 1);

    for (const outcome of ['published', 'delivered', 'acknowledged']) {
      assert.ok(total(m, 'supply_bus_messages_total', { queue: 'workflows.sync-chunks', outcome }) >= 1, outcome);
      assert.ok(total(m, 'supply_bus_messages_total', { queue: 'workflows.job-events', outcome }) >= 1, outcome);
    }
    assert.ok(total(m, 'supply_bus_handler_duration_seconds_count', { queue: 'workflows.sync-chunks' }) >= 1);
    assert.ok(m.some((s) => s.name === 'supply_bus_queue_messages' && s.labels.queue === 'workflows.sync-chunks'));
    assert.ok(total(m, 'supply_bus_queue_consumers', { queue: 'workflows.sync-chunks' }) >= 1);
    assert.ok(total(m, 'supply_bus_message_age_seconds_count', { queue: 'workflows.sync-chunks' }) >= 1);
    assert.ok(
      m.some((s) => s.name === 'supply_bus_queue_oldest_message_age_seconds' && s.labels.queue === 'workflows.sync-chunks'),
      'an empty queue has age 0',
    );

    // The limits set up front were broadcast to the gateway and acknowledged before the calls returned.
    assert.ok(total(m, 'supply_broadcasts_total', { topic: 'tokens.access-changed', outcome: 'acknowledged' }) >= 2);
    assert.ok(total(m, 'supply_broadcast_wait_seconds_count', { topic: 'tokens.access-changed' }) >= 2);

    assert.ok(total(m, 'supply_jobs_started_total', { kind: syncJob.kind }) >= 1);
    assert.ok(total(m, 'supply_jobs_finished_total', { kind: syncJob.kind, status: 'succeeded' }) >= 1);
    assert.ok(total(m, 'supply_jobs_finished_total', { kind: 'forecast_run', status: 'succeeded' }) >= 1);
    assert.ok(total(m, 'supply_job_duration_seconds_count', { kind: syncJob.kind }) >= 1);
    assert.ok(total(m, 'supply_job_rows_total', { kind: syncJob.kind, outcome: 'created' }) >= 3);
    // Retries and dead letters show as series from the start (0 on a clean run), so rates and alerts see them.
    for (const kind of [syncJob.kind, 'forecast_run', 'supply_plan_run']) {
      assert.ok(
        m.some((s) => s.name === 'supply_job_parts_retried_total' && s.labels.kind === kind),
        kind,
      );
    }
    for (const outcome of ['retried', 'dead_lettered']) {
      assert.ok(
        m.some((s) => s.name === 'supply_bus_messages_total' && s.labels.queue === 'workflows.sync-chunks' && s.labels.outcome === outcome),
        outcome,
      );
    }

    assert.ok(total(m, 'supply_forecast_series_total', { outcome: 'ok' }) >= 1);
    assert.ok(total(m, 'supply_forecast_models_chosen_total') >= 1);
    assert.ok(total(m, 'supply_plans_computed_total', { outcome: 'planned' }) >= 1);

    assert.ok(total(m, 'process_cpu_seconds_total') > 0, 'default Node process metrics');
    assert.ok(m.some((s) => s.name === 'nodejs_heap_size_used_bytes'));
  });

  it('labels stay templates: many tenants, ids and paths add no label values', async () => {
    const before = await scrape();
    const ids = Array.from({ length: 25 }, (_, i) => 900_000 + i * 7);
    const tenants = Array.from({ length: 10 }, (_, i) => `tenant${i}x${base}`);
    for (const id of ids) await call(`/demo/api/v1/items/${id}`);
    for (const t of tenants) await call(`/${t}/api/v1/items/${ids[0]}`);
    for (const t of tenants) await call(`/${t}/no/such/path/${t}`);
    // A known path with a method it does not take is labelled with its template.
    for (const id of ids.slice(0, 3)) assert.equal((await call(`/demo/api/v1/jobs/${id}`, { method: 'DELETE' })).status, 405);
    const after = await scrape();
    const values = new Set(after.flatMap((s) => Object.values(s.labels)));
    for (const v of values) {
      assert.ok(!tenants.some((t) => v.includes(t)), `label value ${v} names a tenant`);
      assert.ok(!ids.some((id) => v.includes(String(id))), `label value ${v} names an id`);
      assert.ok(!v.includes(token.split('|')[1] ?? token), 'no token in labels');
    }
    const routes = new Set(after.filter((s) => s.name === 'supply_http_requests_total').map((s) => s.labels.route!));
    for (const r of routes) assert.ok(r === 'unmatched' || r.startsWith('/'), r);
    assert.ok(routes.has('/:tenant/api/v1/items/:id'));
    assert.ok(routes.has('unmatched'));
    assert.ok(
      after.some(
        (s) => s.name === 'supply_http_requests_total' && s.labels.route === '/:tenant/api/v1/jobs/:job_id' && s.labels.status === '405',
      ),
      'the 405s under their route template',
    );
    // 38 distinct paths hit: the series of the HTTP counter grew by a handful of route/status pairs at most.
    const series = (ss: Sample[]) => ss.filter((s) => s.name === 'supply_http_requests_total').length;
    assert.ok(series(after) - series(before) <= 5, `${series(before)} -> ${series(after)}`);
  });

  it('writes exactly one access log line per request, with its id, tenant, token id, route, status, duration and bytes', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const access = json().filter((l) => l.access === true);
    for (const id of sent) {
      const mine = access.filter((l) => l.request_id === id);
      assert.equal(mine.length, 1, `request ${id}: ${mine.length} access lines`);
      const line = mine[0]!;
      for (const field of ['method', 'route', 'status', 'duration_ms', 'bytes'])
        assert.ok(line[field] !== undefined, `${field} in ${JSON.stringify(line)}`);
    }
    const ok = access.find((l) => l.route === '/:tenant/api/v1/items' && l.status === 200)!;
    assert.equal(ok.tenant, 'demo');
    assert.equal(typeof ok.token_id, 'number');
    assert.ok((ok.bytes as number) > 0);
    const refused = access.find((l) => l.status === 401)!;
    assert.equal(refused.reason, 'unauthenticated');
    const missing = access.find((l) => l.status === 404 && l.route === 'unmatched')!;
    assert.equal(missing.reason, 'not-found');
    assert.ok(!lines.some((l) => l.includes(token.split('|')[1] ?? token)), 'no token in any line');
    // A client's invalid id is replaced, and the answer echoes the one used.
    const res = await fetch(`${baseUrl}/healthz`, { headers: { 'X-Request-Id': 'bad id with spaces' } });
    const echoed = res.headers.get('x-request-id')!;
    assert.notEqual(echoed, 'bad id with spaces');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(json().filter((l) => l.access === true && l.request_id === echoed).length, 1);
  });

  it('the request id of a sync appears on the workflows and transactional lines its work causes', async () => {
    const sync = await call('/demo/api/v1/workflows/sync-sales', {
      method: 'POST',
      body: { mode: 'upsert', data: days('2034-03-01', 2).map((d, i) => salesRow(d, i + 1)) },
    });
    assert.equal(sync.status, 202);
    await waitJob(sync.body.data[0].job_id);
    await new Promise((r) => setTimeout(r, 300));
    const mine = json().filter((l) => l.request_id === sync.requestId);
    const modules = new Set(mine.map((l) => l.module));
    assert.ok(modules.has('gateway'), 'gateway');
    assert.ok(modules.has('workflows'), 'workflows');
    assert.ok(modules.has('transactional'), 'transactional');
    // The chunk work ran on a bus consumer: its transactional calls (applySales) carry the request id too.
    assert.ok(
      mine.some((l) => l.module === 'transactional' && l.rpc === 'applySales'),
      JSON.stringify(mine.map((l) => [l.module, l.rpc, l.msg])),
    );
    assert.ok(mine.filter((l) => l.module === 'workflows').every((l) => l.tenant === 'demo'));
  });
});
