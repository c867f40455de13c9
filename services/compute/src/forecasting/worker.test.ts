import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AppError,
  createLogger,
  openBus,
  openStore,
  type Bus,
  type CallOverrides,
  type Clients,
  type Collection,
  type Store,
  type Subscription,
} from '@supply/kit';
import { JOB_EVENTS_QUEUE, supply_transactional_v1 as tpb } from '@supply/contracts';
import {
  applySales,
  deleteSalesOutsideLoad,
  listSales,
  openSales,
  timestamp as salesTimestamp,
  type SalesDeps,
} from '@supply/transactional';
import { foldJobEvent, parseJobEvent, timestamp, ZERO_COUNTS, type JobDoc } from '@supply/workflows';
import { openModelRuns, type ModelRunDoc } from '../runs/repository';
import type { SalesPort } from './history';
import { planChunks } from './planner';
import { openLatestForecasts, type LatestForecasts } from './latest';
import { chunkId, openForecastCollections, type ForecastCollections, type ForecastRunDoc, type SeriesRef } from './repository';
import { FORECAST_QUEUE, ForecastWorker, STALLED_RUN_MS, type ForecastMessage } from './worker';

const TENANT = 't1';
const HISTORY = { id: 1, name: 'History' };
const FORECAST = { id: 2, name: 'Forecast' };
const WEEK = { id: 2, span: 'week' };
const MAX_DELIVERIES = 2;
const FINISHED = ['succeeded', 'partially_succeeded', 'failed'];

const seriesRef = (i: number, group: 'Retail' | 'Online' = i % 2 ? 'Online' : 'Retail'): SeriesRef => ({
  item_customer_group_id: i,
  item_id: 100 + i,
  item_name: `SKU-${String(i).padStart(3, '0')}`,
  customer_group_id: group === 'Retail' ? 10 : 11,
  customer_group_name: group,
});

/** `count` Mondays ending on 2024-12-30. */
const weeks = (count: number) =>
  Array.from({ length: count }, (_, i) =>
    new Date(Date.parse('2024-12-30T00:00:00Z') - (count - 1 - i) * 7 * 86_400_000).toISOString().slice(0, 10),
  );

/** Deterministic weekly demand: a level with a small wiggle, or mostly zeros. */
const demand = (i: number, t: number) => (i % 5 === 0 ? ((t * 7 + i) % 6 === 0 ? 9 : 0) : 20 + i + ((t * 13 + i * 7) % 9));

const row = (s: SeriesRef, saleType: { id: number; name: string }, sell_date: string, quantity: number): tpb.SalesRow => ({
  ...s,
  sale_type_id: saleType.id,
  sale_type_name: saleType.name,
  timing_interval_id: WEEK.id,
  timing_interval_span: WEEK.span,
  uom_id: 1,
  uom_name: 'Each',
  uom_abbr: 'ea',
  sell_date,
  quantity,
});

describe('forecast workers (embedded store and bus, transactional on its own store)', function () {
  this.timeout(60_000);
  let dir: string;
  let computeStore: Store;
  let salesStore: Store;
  let busStore: Store;
  let bus: Bus;
  let salesDeps: SalesDeps;
  let sales: SalesPort;
  let forecasts: ForecastCollections;
  let latest: LatestForecasts;
  let modelRuns: Collection<ModelRunDoc>;
  let jobs: Map<number, JobDoc>;
  let subscriptions: Subscription[];
  /** Series ids whose history read fails (a transactional outage for them). */
  let failing: Set<number>;
  let nextJob: number;

  const tenantOf = (call?: CallOverrides) => call?.context?.tenant ?? assert.fail('a call without a tenant');
  const logger = createLogger('silent');
  const newWorker = () =>
    new ForecastWorker({
      forecasts,
      modelRuns,
      latest,
      sales,
      bus,
      logger,
      maxDeliveries: MAX_DELIVERIES,
    });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'forecasting-'));
    [computeStore, salesStore, busStore] = await Promise.all(
      ['compute', 'transactional', 'bus'].map((database) => openStore({ database, dataDir: dir })),
    );
    bus = await openBus({ store: busStore, maxDeliveries: MAX_DELIVERIES, redeliveryDelayMs: 10, pollIntervalMs: 20 });
    salesDeps = { sales: await openSales(salesStore), clients: {} as Clients, now: () => salesTimestamp() };
    failing = new Set();
    sales = {
      listSales: async (request, call) => {
        if (request.filter?.item_customer_group_ids.some((id) => failing.has(id)))
          throw new AppError('precondition_failed', 'transactional refused the series');
        return listSales(salesDeps, tenantOf(call), request);
      },
      applySales: async (request, call) => applySales(salesDeps, tenantOf(call), request),
      deleteSalesOutsideLoad: async (request, call) => deleteSalesOutsideLoad(salesDeps, tenantOf(call), request),
    };
    forecasts = await openForecastCollections(computeStore);
    latest = await openLatestForecasts(computeStore);
    modelRuns = await openModelRuns(computeStore);
    jobs = new Map();
    nextJob = 1;
    subscriptions = [
      await bus.consume(JOB_EVENTS_QUEUE, async (body) => {
        const event = parseJobEvent(body);
        const folded = foldJobEvent(jobs.get(event.job_id)!, event, timestamp());
        if (folded) jobs.set(event.job_id, folded);
      }),
      // Two workers, as two compute processes would be.
      await bus.consume<ForecastMessage>(FORECAST_QUEUE, newWorker().handle, { prefetch: 2 }),
      await bus.consume<ForecastMessage>(FORECAST_QUEUE, newWorker().handle, { prefetch: 2 }),
    ];
  });

  afterEach(async () => {
    await Promise.all(subscriptions.map((s) => s.close()));
    await bus.close();
    await Promise.all([computeStore, salesStore, busStore].map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function seedHistory(list: SeriesRef[], periods = 52): Promise<void> {
    const rows = list.flatMap((s) => weeks(periods).map((date, t) => row(s, HISTORY, date, demand(s.item_customer_group_id, t))));
    await applySales(salesDeps, TENANT, { load_id: 'seed', rows, refuse_creates: false, refuse_updates: false, dry_run: false });
  }

  /** A run as the service registers it: job, run, chunks on the bus. */
  async function startRun(list: SeriesRef[], options: Partial<ForecastRunDoc> = {}): Promise<ForecastRunDoc> {
    const jobId = nextJob++;
    const now = timestamp();
    jobs.set(jobId, {
      _id: jobId,
      tenant: TENANT,
      kind: 'forecast_run',
      status: 'queued',
      token_id: 1,
      user_id: 1,
      progress: { processed: 0, total: list.length },
      result: { ...ZERO_COUNTS },
      errors: [],
      errors_count: 0,
      message: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
      version: 0,
      parts: [],
      sync: null,
    });
    const { _id: runId } = await modelRuns.insertOne({
      tenant: TENANT,
      kind: 'forecast',
      job_id: jobId,
      status: 'queued',
      created_at: now,
      finished_at: null,
    });
    const chunks = planChunks(list);
    const run: ForecastRunDoc = {
      _id: runId,
      tenant: TENANT,
      job_id: jobId,
      principal: { tenant: TENANT, tokenId: 1, userId: 1, scopes: ['*'], isAdmin: false },
      phase: 'running',
      scope: 'all',
      forecast_periods: 8,
      algorithm: 'auto',
      missing_imputation: 'auto',
      forecast_constraint: 'auto',
      history_start: null,
      history_end: '2024-12-30',
      sale_types: { history: HISTORY, forecast: FORECAST },
      series_count: list.length,
      chunks: chunks.length,
      load_id: `forecast-run:${runId}`,
      planned_deletes: null,
      started_sent: false,
      outcome: null,
      created_at: Date.now(),
      updated_at: Date.now(),
      ...options,
    };
    await forecasts.runs.insertOne(run);
    await forecasts.locks.insertOne({ _id: TENANT, run_id: runId, locked_at: Date.now() });
    await forecasts.chunks.insertMany(
      chunks.map((c) => ({
        _id: chunkId(runId, c.seq),
        run_id: runId,
        seq: c.seq,
        first_position: c.first_position,
        series: c.series,
        state: 'pending' as const,
        updated_at: Date.now(),
      })),
    );
    for (const c of chunks) await bus.send<ForecastMessage>(FORECAST_QUEUE, { run_id: runId, tenant: TENANT, step: 'chunk', seq: c.seq });
    return run;
  }

  async function finished(jobId: number): Promise<JobDoc> {
    for (let i = 0; i < 600; i++) {
      const job = jobs.get(jobId)!;
      if (FINISHED.includes(job.status)) return job;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.fail(`job ${jobId} did not finish: ${JSON.stringify(jobs.get(jobId))}`);
  }

  async function forecastRows(): Promise<tpb.SalesRecord[]> {
    const { records } = await listSales(salesDeps, TENANT, {
      after_id: 0,
      limit: 10_000,
      filter: tpb.SalesFilter.fromPartial({ sale_type_names: ['Forecast'] }),
    });
    return records;
  }

  const bySeries = (records: tpb.SalesRecord[]) => {
    const map = new Map<number, tpb.SalesRecord[]>();
    for (const r of records)
      map.set(
        r.item_customer_group_id,
        [...(map.get(r.item_customer_group_id) ?? []), r].sort((a, b) => (a.sell_date < b.sell_date ? -1 : 1)),
      );
    return map;
  };

  it('forecasts every series with History over several chunks, skips the one without, and records model and holdout error per series', async () => {
    const list = Array.from({ length: 20 }, (_, i) => seriesRef(i + 1));
    await seedHistory(list.slice(0, 19));
    const run = await startRun(list);
    assert.equal(run.chunks, 7);

    const job = await finished(run.job_id);
    assert.equal(job.status, 'succeeded', job.message ?? '');
    assert.deepEqual(job.progress, { processed: 20, total: 20 });
    assert.deepEqual(job.result, { created: 19 * 8, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    assert.match(job.message!, /^Forecast 19 of 20 series, 8 periods each: 152 forecast records created.*1 series had no History/);

    const written = bySeries(await forecastRows());
    assert.equal(written.size, 19);
    for (const [, records] of written) {
      assert.deepEqual(
        records.map((r) => r.sell_date),
        ['2025-01-06', '2025-01-13', '2025-01-20', '2025-01-27', '2025-02-03', '2025-02-10', '2025-02-17', '2025-02-24'],
      );
      for (const r of records) {
        assert.ok(Number.isInteger(r.quantity) && r.quantity >= 0, `whole units from whole-unit history: ${r.quantity}`);
        assert.equal(r.sale_type_name, 'Forecast');
        assert.equal(r.timing_interval_span, 'week');
        assert.equal(r.uom_abbr, 'ea');
      }
    }
    const results = await forecasts.results.find({ run_id: run._id }, { sort: [['position', 1]] });
    assert.deepEqual(
      results.map((r) => r.position),
      [...list.keys()],
    );
    for (const r of results.slice(0, 19)) {
      assert.equal(r.status, 'forecast');
      assert.ok(r.model.length > 0);
      assert.equal(typeof r.holdout_error, 'number');
      assert.equal(r.history_periods, 52);
      assert.equal(r.forecast_start, '2025-01-06');
      // Diagnostics: parameters, validation, and intervals around the forecast written.
      assert.equal(typeof r.parameters, 'object');
      assert.ok(r.validation && 'mase' in r.validation && 'rmsse' in r.validation && 'bias' in r.validation);
      const written = bySeries(await forecastRows()).get(r.series.item_customer_group_id)!;
      assert.deepEqual(
        r.intervals!.forecast,
        written.map((w) => w.quantity),
      );
      r.intervals!.forecast.forEach((f, k) =>
        assert.ok(
          r.intervals!.lo95[k]! <= r.intervals!.lo80[k]! &&
            r.intervals!.lo80[k]! <= f &&
            f <= r.intervals!.hi80[k]! &&
            r.intervals!.hi80[k]! <= r.intervals!.hi95[k]!,
        ),
      );
      assert.deepEqual(r.keys, {
        item: r.series.item_name.toLowerCase(),
        customer_group: r.series.customer_group_name.toLowerCase(),
        model: r.model.toLowerCase(),
        family: r.model.toLowerCase().replace(/\(.*$/, ''),
      });
      // Kept as the series' latest uncertainty, for service-level safety stock.
      const kept = (await latest.findById(`${TENANT}:${r.series.item_customer_group_id}`))!;
      assert.equal(kept.run_id, run._id);
      assert.deepEqual(kept.dates, r.forecast_dates);
      assert.equal(kept.sigma.length, 8);
      assert.ok(kept.sigma.every((v) => v >= 0));
    }
    assert.equal(await latest.count({}), 19, 'the skipped series has no latest forecast');
    const summary = (await forecasts.runs.findById(run._id))!.accuracy!;
    assert.equal(summary.series, results.filter((r) => r.validation).length);
    assert.ok(summary.mean_mase !== null && summary.mean_mase > 0);
    assert.ok(
      results.some((r) => r.series_class === 'intermittent' && /croston|sba|tsb|adida|naive/.test(r.model)),
      'intermittent series get an intermittent-demand model',
    );
    assert.equal(results[19]!.status, 'skipped');
    assert.equal((await modelRuns.findById(run._id))!.status, 'succeeded');
    assert.equal(await forecasts.locks.count({}), 0, 'the tenant is free for the next run');
  });

  it('is deterministic: a redelivered chunk writes nothing again and reports what its first run did', async () => {
    const list = [seriesRef(1), seriesRef(2), seriesRef(5)];
    await seedHistory(list);
    const run = await startRun(list);
    await finished(run.job_id);
    const before = await forecastRows();

    const chunk = (await forecasts.chunks.findById(chunkId(run._id, 0)))!;
    const again = await newWorker().forecastChunk(run, chunk);
    // As after a crash between the chunk's write and its record in the ledger: the job still counts the records it created.
    assert.deepEqual(again.counts, { created: chunk.series.length * 8, updated: 0, unchanged: 0, failed: 0 });
    const after = await forecastRows();
    assert.deepEqual(
      after.map((r) => [r.id, r.sell_date, r.quantity, r.updated_at]),
      before.map((r) => [r.id, r.sell_date, r.quantity, r.updated_at]),
    );
  });

  it('replaces the earlier forecast of each series it forecasts and leaves the other series’ forecasts alone', async () => {
    const list = Array.from({ length: 6 }, (_, i) => seriesRef(i + 1));
    await seedHistory(list);
    const first = await startRun(list);
    await finished(first.job_id);
    assert.equal((await forecastRows()).length, 6 * 8);

    // Series 2 and 4 (both Retail) again with 3 periods: 5 earlier records each go; 1, 3, 5 (Online) and 6 (Retail) keep theirs.
    const second = await startRun([seriesRef(2), seriesRef(4)], { forecast_periods: 3 });
    const job = await finished(second.job_id);
    assert.equal(job.status, 'succeeded', job.message ?? '');
    assert.deepEqual(job.result, { created: 0, updated: 0, deleted: 10, unchanged: 6, failed: 0 });
    const written = bySeries(await forecastRows());
    assert.deepEqual(
      [...written.keys()].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6],
    );
    for (const id of [2, 4])
      assert.deepEqual(
        written.get(id)!.map((r) => r.sell_date),
        ['2025-01-06', '2025-01-13', '2025-01-20'],
      );
    for (const id of [1, 3, 5, 6]) assert.equal(written.get(id)!.length, 8);
  });

  it('forecasts a series whose last sale came before the history end from the end of the window', async () => {
    const s = seriesRef(3);
    await seedHistory([s], 30);
    const run = await startRun([s], { history_end: '2025-03-31', forecast_periods: 2 });
    await finished(run.job_id);
    const records = await forecastRows();
    // 13 weeks after the last sale (2024-12-30) without records count as zero sales.
    assert.deepEqual(
      records.map((r) => r.sell_date),
      ['2025-04-07', '2025-04-14'],
    );
    const result = (await forecasts.results.findOne({ run_id: run._id }))!;
    assert.equal(result.history_periods, 43);
  });

  it('reports the series of a chunk that fails on its last delivery as failed, and still finishes the job', async () => {
    const list = Array.from({ length: 4 }, (_, i) => seriesRef(i + 1));
    await seedHistory(list);
    failing.add(2);
    const run = await startRun(list);
    const job = await finished(run.job_id);
    assert.equal(job.status, 'partially_succeeded');
    assert.deepEqual(job.result, { created: 3 * 8, updated: 0, deleted: 0, unchanged: 0, failed: 8 });
    assert.equal(job.errors_count, 1);
    assert.equal(job.errors[0]!.row, 1);
    assert.equal(job.errors[0]!.field, 'item_customer_group_id');
    assert.equal(job.errors[0]!.message, 'SKU-002 / Retail: Could not be forecast: transactional refused the series.');
    assert.equal((await forecasts.results.findOne({ run_id: run._id, position: 1 }))!.status, 'failed');
    assert.equal((await bus.deadLetters(FORECAST_QUEUE)).length, 1, 'the poison chunk rests in the dead-letter queue');

    // The cause is fixed and an operator replays the dead letter: the chunk runs again and its new outcome replaces the failure.
    failing.clear();
    assert.equal(await bus.replayDeadLetters(FORECAST_QUEUE), 1);
    for (let i = 0; i < 400 && jobs.get(run.job_id)!.result.failed > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const replayed = jobs.get(run.job_id)!;
    assert.deepEqual(
      [replayed.status, replayed.result, replayed.errors_count],
      ['succeeded', { created: 4 * 8, updated: 0, deleted: 0, unchanged: 0, failed: 0 }, 0],
    );
    assert.equal((await forecasts.results.findOne({ run_id: run._id, position: 1 }))!.status, 'forecast');
    assert.equal((await bus.deadLetters(FORECAST_QUEUE)).length, 0);
    // The run's own summary follows too (GET /forecasts/runs/{id} reads it), and then the model run's status: two
    // writes, one after the other, so the test waits for the second.
    const settled = async () =>
      (await forecasts.runs.findById(run._id))!.outcome!.status === 'succeeded' &&
      (await modelRuns.findById(run._id))!.status === 'succeeded';
    for (let i = 0; i < 200 && !(await settled()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    const summary = (await forecasts.runs.findById(run._id))!.outcome!;
    assert.equal(summary.status, 'succeeded', summary.message);
    assert.match(summary.message, /^Forecast 4 of 4 series, 8 periods each: 32 forecast records created/);
    assert.equal((await modelRuns.findById(run._id))!.status, 'succeeded');
  });

  it('sweeps stalled runs: one never fully queued fails, one whose finishing step was lost finishes', async () => {
    const list = [seriesRef(1), seriesRef(2)];
    await seedHistory(list);
    const worker = newWorker();

    const stuck = await startRun([], { phase: 'dispatching', chunks: 0 });
    await worker.sweep(Date.now() + STALLED_RUN_MS + 1);
    const failed = await finished(stuck.job_id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.message!, /interrupted before its work was queued/);
    assert.equal(await forecasts.locks.count({}), 0);

    const run = await startRun(list);
    const done = await finished(run.job_id);
    assert.equal(done.status, 'succeeded');
    // As if the finishing step had been lost: the run is settled but not done.
    await forecasts.runs.updateOne({ _id: run._id }, { $set: { phase: 'running' } });
    jobs.set(run.job_id, { ...done, status: 'running', finished_at: null });
    await worker.sweep(Date.now() + STALLED_RUN_MS + 1);
    assert.equal((await finished(run.job_id)).status, 'succeeded');
    assert.equal((await forecasts.runs.findById(run._id))!.phase, 'done');
  });
});
