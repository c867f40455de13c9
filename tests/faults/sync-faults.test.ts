// The fault suite: the services as separate processes on the real RabbitMQ (through a TCP
// relay the test can cut, so the shared broker is never stopped) and Redis, one 20,000-row
// sync per fault. After each: no accepted row lost or doubled, the job's counts equal the
// rows in the store, and its status tells the truth. Needs AMQP_URL; skipped without it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClients, loadConfig, type Clients } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { skipBecause, skipUnless } from '../support/require';
import { days, dropBusNamespace, postFile, readJob, salesCsv, salesRecords, salesRow } from '../e2e/workflows-support';
import { Relay } from '../support/relay';

const AMQP_URL = process.env.AMQP_URL;
const REDIS_URL = process.env.REDIS_URL;
const MAIN = 'services/runner/src/main.ts';
const ROWS = 20_000;
/** The most rows one JSON sync request takes. */
const JSON_ROWS = 10_000;
const ITEMS = Array.from({ length: 40 }, (_, i) => `SKU-${String(i + 1).padStart(4, '0')}`);
const FINISHED = ['succeeded', 'partially_succeeded', 'failed'];
/** The gateway's deadline for internal calls, short so a stopped service answers 504 quickly. */
const GATEWAY_DEADLINE_MS = 4_000;

/** One service process; restartable with the same environment. */
class Service {
  child: ChildProcess | null = null;
  logs: string[] = [];
  private exited: Promise<unknown> = Promise.resolve();
  constructor(
    readonly target: string,
    private readonly env: Record<string, string>,
  ) {}

  start(): void {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, `--target=${this.target}`], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (b: Buffer) => {
      this.logs.push(...String(b).split('\n').filter(Boolean));
      if (this.logs.length > 400) this.logs.splice(0, this.logs.length - 400);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.exited = once(child, 'exit');
    this.child = child;
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  async kill(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

async function eventually<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** `count` rows, 40 items x days from `start`, every row a new record. */
function load(start: string, count: number) {
  const rows = days(start, Math.ceil(count / ITEMS.length))
    .flatMap((date, d) => ITEMS.map((item, i) => salesRow(date, (d * ITEMS.length + i) % 97, { item_name: item })))
    .slice(0, count);
  return { rows, csv: salesCsv(rows), from: String(rows[0]!.sell_date), to: String(rows[rows.length - 1]!.sell_date) };
}

interface Outcome {
  scenario: string;
  sent: number;
  present: number;
  status: string;
  recoveryS: string;
}

describe('fault suite: a 20,000-row sync under faults, services as separate processes', function () {
  this.timeout(600_000);
  const table: Outcome[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'supply-faults-'));
  const namespace = `faults-${randomBytes(4).toString('hex')}`;
  const services = new Map<string, Service>();
  let relay: Relay;
  /** Redis through a relay of its own (when REDIS_URL is set): the shared Redis is never stopped. */
  let redisRelay: Relay | null = null;
  let clients: Clients;
  let gatewayUrl = '';
  let token = '';

  const service = (name: string) => services.get(name)!;
  const logsOf = (...names: string[]) =>
    names
      .flatMap((n) =>
        service(n)
          .logs.slice(-15)
          .map((l) => `[${n}] ${l}`),
      )
      .join('\n');

  before(async function () {
    skipUnless(this, 'AMQP', AMQP_URL ? null : 'AMQP_URL is not set');
    if (!AMQP_URL) return;
    const broker = new URL(AMQP_URL);
    relay = new Relay({ host: broker.hostname, port: Number(broker.port || 5672) });
    await relay.start();
    const viaRelay = new URL(AMQP_URL);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(relay.port);
    let redisUrl: string | undefined;
    if (REDIS_URL) {
      const redis = new URL(REDIS_URL);
      redisRelay = new Relay({ host: redis.hostname, port: Number(redis.port || 6379) });
      await redisRelay.start();
      const viaRedisRelay = new URL(REDIS_URL);
      viaRedisRelay.hostname = '127.0.0.1';
      viaRedisRelay.port = String(redisRelay.port);
      redisUrl = viaRedisRelay.toString();
    }
    const base = await freePortRange(6);
    const credential = randomBytes(32).toString('base64url');
    const env = {
      GRPC_BASE_PORT: String(base),
      SERVICE_CREDENTIAL: credential,
      DATA_DIR: dataDir,
      AMQP_URL: viaRelay.toString(),
      BUS_NAMESPACE: namespace,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      // Passed through, to see what a window shorter than the faults does (rows reported failed, not lost silently).
      ...(process.env.OUTAGE_WINDOW_MS ? { OUTAGE_WINDOW_MS: process.env.OUTAGE_WINDOW_MS } : {}),
    };
    gatewayUrl = `http://127.0.0.1:${base + 5}`;
    clients = createClients(loadConfig({ target: 'gateway', GRPC_BASE_PORT: base, SERVICE_CREDENTIAL: credential, DATA_DIR: dataDir }, {}));
    // Started out of dependency order on purpose: transactional seeds its demo data once reference answers.
    services.set('transactional', new Service('transactional', { ...env, SEED_DEMO: '1' }));
    services.set('workflows', new Service('workflows', env));
    services.set('gateway', new Service('gateway', { ...env, PORT: String(base + 5), GRPC_DEADLINE_MS: String(GATEWAY_DEADLINE_MS) }));
    services.set('tokens', new Service('tokens', { ...env, SEED_DEMO: '1' }));
    services.set('reference', new Service('reference', { ...env, SEED_DEMO: '1' }));
    services.set('compute', new Service('compute', env));
    service('transactional').start();
    await sleep(3_000);
    for (const name of ['workflows', 'gateway', 'tokens', 'compute', 'reference']) service(name).start();
    for (const name of ['tokens', 'reference', 'transactional', 'workflows', 'compute'] as const) {
      await eventually(`${name} ready`, async () => ((await clients.health(name)) ? true : undefined), 90_000);
    }
    await eventually('gateway ready', async () => ((await fetch(`${gatewayUrl}/readyz`)).ok ? true : undefined), 60_000).catch(
      async (err) => {
        const res = await fetch(`${gatewayUrl}/readyz`).then(
          (r) => r.text(),
          (e: unknown) => String(e),
        );
        throw new Error(`${String(err)}: ${res}\n${logsOf('gateway')}`);
      },
    );
    const ctx = { context: { requestId: 'faults', tenant: 'demo' } };
    token = await eventually('a token', async () => {
      await clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, ctx);
      return (await clients.tokens.createToken({ user_email: 'planner@demo.test', name: 'faults', scopes: ['*'], expires_at: '' }, ctx))
        .plain_text_token;
    });
  });

  after(async () => {
    for (const s of services.values()) await s.kill();
    clients?.close();
    await relay?.cut();
    await redisRelay?.cut();
    if (AMQP_URL) await dropBusNamespace({ AMQP_URL, BUS_NAMESPACE: namespace }).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    if (table.length > 0) {
      console.log('\n  scenario                                              rows sent  rows present  status               recovery');
      for (const r of table) {
        console.log(
          `  ${r.scenario.padEnd(52)}  ${String(r.sent).padStart(9)}  ${String(r.present).padStart(12)}  ${r.status.padEnd(19)}  ${r.recoveryS.padStart(8)}`,
        );
      }
      console.log('');
    }
  });

  async function waitFinished(jobId: number, timeoutMs = 240_000): Promise<any> {
    try {
      return await eventually(
        `job ${jobId} finished`,
        async () => {
          const job = await readJob({ clients }, 'demo', token, jobId);
          return FINISHED.includes(job.status) ? job : undefined;
        },
        timeoutMs,
        250,
      );
    } catch (err) {
      throw new Error(`${String(err)}\n${logsOf('workflows', 'transactional')}`, { cause: err });
    }
  }

  async function midJob(jobId: number): Promise<void> {
    await eventually(
      `job ${jobId} under way`,
      async () => {
        const job = await readJob({ clients }, 'demo', token, jobId);
        if (FINISHED.includes(job.status)) throw new Error(`job ${jobId} finished before the fault`);
        return job.progress.processed > 0 ? true : undefined;
      },
      120_000,
      20,
    );
  }

  /** Every accepted row stored exactly once with its quantity, and the job's counts equal what is stored. */
  async function verify(
    scenario: string,
    rows: ReturnType<typeof load>,
    job: any,
    recoveredAt: number,
    faultEndedAt: number,
  ): Promise<void> {
    const stored = (
      await salesRecords(clients, 'demo', {
        customer_group_names: ['Retail'],
        sale_type_names: ['History'],
        sell_date_from: rows.from,
        sell_date_to: rows.to,
      })
    ).filter((r) => ITEMS.includes(r.item_name));
    table.push({
      scenario,
      sent: rows.rows.length,
      present: stored.length,
      status: job.status,
      recoveryS: `${((recoveredAt - faultEndedAt) / 1000).toFixed(1)} s`,
    });
    const keys = new Set(stored.map((r) => `${r.item_name}|${r.sell_date}`));
    assert.equal(keys.size, stored.length, 'no key stored twice');
    // Truthful before complete: whatever happened, the job counts what is stored and names every part it lost.
    assert.equal(job.result.created + job.result.updated + job.result.unchanged, stored.length, 'job counts equal the rows in the store');
    assert.equal(job.result.failed, rows.rows.length - stored.length, 'rows not stored are counted failed');
    // A lost chunk is named by itself, or, when the job stopped moving, by the stall (`field: "job"`).
    const lostChunks = job.errors.filter((e: { field: string }) => e.field.startsWith('chunk.') || e.field === 'job');
    assert.equal(lostChunks.length > 0, stored.length < rows.rows.length, 'errors[] names a lost chunk exactly when rows are missing');
    for (const e of lostChunks) assert.doesNotMatch(e.message, /127\.0\.0\.1|ECONN|Error:|\n\s+at /, 'a stable reason, no internal detail');
    assert.equal(stored.length, rows.rows.length, 'every accepted row stored');
    const want = new Map(rows.rows.map((r) => [`${r.item_name}|${r.sell_date}`, r.quantity]));
    for (const r of stored) assert.equal(r.quantity, want.get(`${r.item_name}|${r.sell_date}`), `${r.item_name} ${r.sell_date}`);
    assert.equal(job.status, 'succeeded', JSON.stringify({ ...job, errors: job.errors.slice(0, 3) }));
    const sent = rows.rows.length;
    assert.deepEqual(job.result, { created: sent, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    assert.deepEqual(job.progress, { processed: sent, total: sent });
    assert.deepEqual(job.errors, []);
  }

  /** Posts a load, breaks something mid-job, and checks the outcome. `inject` resolves when the fault has ended. */
  async function underFault(
    scenario: string,
    start: string,
    inject: (jobId: number) => Promise<void>,
    continueOnError = true,
  ): Promise<void> {
    const rows = load(start, ROWS);
    const res = await postFile({ baseUrl: gatewayUrl }, '/demo/api/v1/workflows/sync-sales/import', {
      token,
      file: rows.csv,
      fields: { 'options[continue_on_error]': String(continueOnError) },
    });
    assert.equal(res.status, 202, res.text);
    const jobId = res.body.data[0].job_id as number;
    await midJob(jobId);
    await inject(jobId);
    const faultEndedAt = Date.now();
    const job = await waitFinished(jobId);
    await verify(scenario, rows, job, Date.now(), faultEndedAt);
  }

  /** The demo's History sales are in (transactional seeds them once reference answers). */
  const demoSeeded = () =>
    eventually(
      'demo sales seeded',
      async () => {
        const page = await clients.transactional.listSales(
          {
            after_id: 0,
            limit: 1,
            filter: {
              item_names: [],
              customer_group_names: [],
              sale_type_names: ['History'],
              timing_intervals: [],
              sell_date_from: '',
              sell_date_to: '',
              item_customer_group_ids: [],
            },
          },
          { context: { requestId: 'faults', tenant: 'demo' } },
        );
        return page.records.length > 0 ? true : undefined;
      },
      120_000,
      500,
    );

  it('transactional started before reference seeds its demo data once reference answers', async () => {
    assert.equal(await demoSeeded(), true);
    assert.ok(
      service('transactional').logs.some((l) => l.includes('demo sales and inventory not seeded yet')),
      'the first attempt met reference down',
    );
  });

  it('transactional SIGKILLed mid-job, restarted 2 s later', () =>
    underFault('SIGKILL transactional, restart after 2 s', '2060-01-01', async () => {
      await service('transactional').kill();
      await sleep(2_000);
      service('transactional').start();
      await eventually('transactional back', async () => ((await clients.health('transactional')) ? true : undefined), 60_000, 100);
    }));

  it('all or nothing (continue_on_error false): transactional SIGKILLed during the apply phase resumes to every row', () =>
    // In an all-or-nothing load rows count as processed only once applying began, so midJob waits for the apply phase.
    underFault(
      'all-or-nothing, SIGKILL transactional while applying',
      '2072-01-01',
      async () => {
        await service('transactional').kill();
        await sleep(2_000);
        service('transactional').start();
        await eventually('transactional back', async () => ((await clients.health('transactional')) ? true : undefined), 60_000, 100);
      },
      false,
    ));

  it('workflows SIGKILLed mid-job, restarted 2 s later', () =>
    underFault('SIGKILL workflows, restart after 2 s', '2062-01-01', async () => {
      await service('workflows').kill();
      await sleep(2_000);
      service('workflows').start();
      await eventually('workflows back', async () => ((await clients.health('workflows')) ? true : undefined), 60_000, 100);
    }));

  it('reference SIGKILLed mid-job, restarted 2 s later', () =>
    underFault('SIGKILL reference, restart after 2 s', '2076-01-01', async () => {
      await service('reference').kill();
      await sleep(2_000);
      service('reference').start();
      await eventually('reference back', async () => ((await clients.health('reference')) ? true : undefined), 60_000, 100);
    }));

  it('compute SIGKILLed during a whole-view supply plan run, restarted 2 s later: every item-location planned once', async () => {
    await demoSeeded();
    const get = async (path: string) => {
      const res = await fetch(`${gatewayUrl}/demo/api/v1/${path}`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const res = await fetch(`${gatewayUrl}/demo/api/v1/supply-plans/generate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: 'standard', view_name: 'Default' }),
    });
    const text = await res.text();
    assert.equal(res.status, 202, text);
    const jobId = JSON.parse(text).data[0].job_id as number;
    // The run takes a few seconds (two durable writes per item-location): kill compute while its first chunks are planned.
    await sleep(300);
    const before = await readJob({ clients }, 'demo', token, jobId);
    assert.ok(before.progress.processed < before.progress.total, `the run finished before the fault: ${JSON.stringify(before)}`);
    await service('compute').kill();
    await sleep(2_000);
    service('compute').start();
    await eventually('compute back', async () => ((await clients.health('compute')) ? true : undefined), 60_000, 100);
    const faultEndedAt = Date.now();
    const job = await waitFinished(jobId, 180_000);
    const recoveredAt = Date.now();
    const rows: any[] = [];
    let next: string | null = null;
    do {
      const page = await get(`supply-plans?filter[view_name]=Default&per_page=5000${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
      assert.equal(page.status, 200);
      rows.push(...page.body.data);
      next = page.body.meta.pagination.next_cursor;
    } while (next);
    const planned = new Set(rows.map((r) => r.item_location_id)).size;
    table.push({
      scenario: 'SIGKILL compute mid supply plan run (item-locations)',
      sent: job.progress.total,
      present: planned,
      status: job.status,
      recoveryS: `${((recoveredAt - faultEndedAt) / 1000).toFixed(1)} s`,
    });
    assert.deepEqual(job.progress, { processed: 108, total: 108 });
    assert.deepEqual(job.result, { created: 108, updated: 0, deleted: 0, unchanged: 0, failed: 0 }, 'each item-location counted once');
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(planned, 108);
    assert.equal(rows.length, 108 * 52, 'one row per item-location and week, none doubled');
  });

  it('compute SIGKILLed during a forecast run of every series, restarted 2 s later: each forecast stored once, the job counts them', async () => {
    await demoSeeded();
    // The forecast window follows the latest History (the loads above moved it), so count every Forecast record.
    const forecasts = () => salesRecords(clients, 'demo', { sale_type_names: ['Forecast'] });
    const already = (await forecasts()).length;
    const res = await fetch(`${gatewayUrl}/demo/api/v1/forecasts/generate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ scope: 'all', forecast_periods: 12 }),
    });
    const text = await res.text();
    assert.equal(res.status, 202, text);
    const jobId = JSON.parse(text).data[0].job_id as number;
    await sleep(1_000);
    const before = await readJob({ clients }, 'demo', token, jobId);
    assert.ok(!FINISHED.includes(before.status), `the run finished before the fault: ${JSON.stringify(before)}`);
    await service('compute').kill();
    await sleep(2_000);
    service('compute').start();
    await eventually('compute back', async () => ((await clients.health('compute')) ? true : undefined), 60_000, 100);
    const faultEndedAt = Date.now();
    const job = await waitFinished(jobId, 180_000);
    const recoveredAt = Date.now();
    const stored = await forecasts();
    // 156 series (the demo's dry run says so) x 12 weeks.
    const expected = 156 * 12;
    table.push({
      scenario: 'SIGKILL compute mid forecast run (forecast values)',
      sent: expected,
      present: stored.length - already,
      status: job.status,
      recoveryS: `${((recoveredAt - faultEndedAt) / 1000).toFixed(1)} s`,
    });
    assert.equal(
      new Set(stored.map((r) => `${r.item_name}|${r.customer_group_name}|${r.sell_date}`)).size,
      stored.length,
      'no forecast stored twice',
    );
    assert.equal(job.status, 'succeeded', JSON.stringify({ ...job, errors: job.errors.slice(0, 3) }));
    assert.deepEqual(job.result, { created: expected, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    assert.equal(stored.length - already, job.result.created, 'the job counts what is stored');
  });

  it('the broker unreachable for 20 s mid-job', () =>
    underFault('broker cut for 20 s', '2064-01-01', async () => {
      await relay.cut();
      await sleep(20_000);
      await relay.start();
    }));

  it('transactional stopped (SIGSTOP) for 15 s mid-job: reads answer 504, then everything recovers', () =>
    underFault('SIGSTOP transactional for 15 s', '2066-01-01', async () => {
      const stoppedAt = Date.now();
      service('transactional').signal('SIGSTOP');
      try {
        const t0 = Date.now();
        const res = await fetch(`${gatewayUrl}/demo/api/v1/sales-data?per_page=1`, {
          headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
        });
        const took = Date.now() - t0;
        const text = await res.text();
        assert.equal(res.status, 504, text);
        assert.match(res.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/, 'a 504 says when to retry');
        assert.ok(took < GATEWAY_DEADLINE_MS + 3_000, `answered within the deadline (${took} ms)`);
        assert.doesNotMatch(text, /127\.0\.0\.1|ECONNREFUSED|DEADLINE_EXCEEDED/, 'no internal detail');
        await sleep(Math.max(0, 15_000 - (Date.now() - stoppedAt)));
      } finally {
        service('transactional').signal('SIGCONT');
      }
      const res = await eventually(
        'reads answer again',
        async () => {
          const r = await fetch(`${gatewayUrl}/demo/api/v1/sales-data?per_page=1`, {
            headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
          });
          return r.status === 200 ? r : undefined;
        },
        30_000,
        250,
      );
      assert.equal(res.status, 200);
    }));

  it('Redis unreachable for 10 s mid-job: credit-costing requests answer 503 with Retry-After, job reads still answer, the job loses nothing', async function () {
    if (!redisRelay) return skipBecause(this, 'REDIS_URL is not set: the gateway meters in memory, so there is no Redis to cut');
    const cutter = redisRelay;
    const get = (path: string) =>
      fetch(`${gatewayUrl}/demo/api/v1${path}`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
    await underFault('Redis cut for 10 s', '2074-01-01', async (jobId) => {
      await cutter.cut();
      const cutAt = Date.now();
      try {
        const refused = await eventually(
          'a paid request refused',
          async () => {
            const res = await get('/sales-data?per_page=1');
            return res.status === 503 ? res : undefined;
          },
          10_000,
          100,
        );
        assert.equal(refused.headers.get('retry-after'), '2');
        assert.match(refused.headers.get('content-type') ?? '', /problem\+json/);
        assert.doesNotMatch(await refused.text(), /127\.0\.0\.1|ECONNREFUSED|redis/i, 'no internal detail');
        // A utility (cost 0) is served by the in-process limiter meanwhile.
        const job = await get(`/jobs/${jobId}`);
        assert.equal(job.status, 200, await job.text());
        await sleep(Math.max(0, 10_000 - (Date.now() - cutAt)));
      } finally {
        await cutter.start();
      }
      await eventually(
        'paid requests answer again',
        async () => ((await get('/sales-data?per_page=1')).status === 200 ? true : undefined),
        30_000,
        250,
      );
    });
  });

  it('the gateway SIGKILLed while a sync is being posted: the client retries with the same key until 202, and the rows load once', async () => {
    const rows = load('2070-01-01', JSON_ROWS);
    const key = `faults-${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({ data: rows.rows, options: { continue_on_error: true } });
    const post = async () => {
      const res = await fetch(`${gatewayUrl}/demo/api/v1/workflows/sync-sales`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'application/json',
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        },
        body,
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
    };
    // The first attempt uploads slowly (64 KiB every 20 ms), so the gateway dies with the body half received.
    const bytes = Buffer.from(body);
    let at = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (at >= bytes.length) return controller.close();
        await sleep(20);
        controller.enqueue(bytes.subarray(at, at + 65_536));
        at += 65_536;
      },
    });
    const first = fetch(`${gatewayUrl}/demo/api/v1/workflows/sync-sales`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: slow,
      duplex: 'half',
    } as RequestInit).then(
      (r) => r.status,
      () => null,
    );
    await sleep(200);
    await service('gateway').kill();
    assert.equal(await first, null, 'the first attempt got no answer (the gateway died mid-upload)');
    service('gateway').start();
    await eventually('gateway back', async () => ((await fetch(`${gatewayUrl}/readyz`)).ok ? true : undefined), 60_000, 100);
    const faultEndedAt = Date.now();
    // What a careful client does: retry with the same key; 409 means the first is still being worked on.
    const retry = await eventually(
      'the retry accepted',
      async () => {
        const r = await post();
        if (r.status === 409) return undefined;
        assert.equal(r.status, 202, r.text);
        return r;
      },
      60_000,
      500,
    );
    const job = await waitFinished(retry.body.data[0].job_id as number);
    await verify('SIGKILL gateway while posting, retry with the same key', rows, job, Date.now(), faultEndedAt);
  });

  it('the broker unreachable while a sync is posted: 202 without waiting for it, and a retry with the same key replays that job', async () => {
    // A JSON sync (at most 10,000 rows a request): the import route's own request context is another change's concern.
    const rows = load('2068-01-01', JSON_ROWS);
    const key = `faults-${randomBytes(6).toString('hex')}`;
    const post = async () => {
      const res = await fetch(`${gatewayUrl}/demo/api/v1/workflows/sync-sales`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'application/json',
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        },
        body: JSON.stringify({ data: rows.rows, options: { continue_on_error: true } }),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
    };
    await relay.cut();
    const cutAt = Date.now();
    let first: Awaited<ReturnType<typeof post>>;
    try {
      const t0 = Date.now();
      first = await post();
      const took = Date.now() - t0;
      assert.equal(first.status, 202, first.text);
      // The broker's own 30 s send timeout must not show.
      assert.ok(took < 10_000, `answered without waiting for the broker (${took} ms)`);
      await sleep(Math.max(0, 20_000 - (Date.now() - cutAt)));
    } finally {
      await relay.start();
    }
    const faultEndedAt = Date.now();
    const retry = await post();
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    const jobId = first.body.data[0].job_id as number;
    assert.equal(retry.body.data[0].job_id, jobId, 'the retry names the first job: no second load');
    const job = await waitFinished(jobId);
    await verify('broker cut while posting, retry with the same key', rows, job, Date.now(), faultEndedAt);
  });
});
