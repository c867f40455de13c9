import assert from 'node:assert/strict';
import { api, startSystem, type TestSystem } from '../support/system';
import { salesRow, waitForJob } from './workflows-support';

const RUNS = '/demo/api/v1/forecasts/runs';
const call = { context: { requestId: 'test', tenant: 'demo' } };
const CLASSES = ['smooth', 'erratic', 'intermittent', 'lumpy', 'no_demand'];

describe('forecast run diagnostics: GET /forecasts/runs and /forecasts/runs/{id}', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let token: string;
  let itemRun: { job: number; id: number };
  let groupRun: { job: number; id: number };

  const get = (path: string, t = token) => api(sys, path, { token: t });

  async function run(body: Record<string, unknown>): Promise<number> {
    const res = await api(sys, '/demo/api/v1/forecasts/generate', { method: 'POST', token, body });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(sys, 'demo', token, res.body.data[0].job_id, 90_000);
    assert.equal(job.status, 'succeeded', job.message);
    return job.job_id;
  }

  /** Every series of a run, page by page; checks the pages chain and answers 200. */
  async function walk(runId: number, query: string, perPage: number) {
    const pages: any[][] = [];
    let cursor = '';
    for (;;) {
      const res = await get(`${RUNS}/${runId}?per_page=${perPage}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.length, 1);
      pages.push(res.body.data[0].series);
      const p = res.body.meta.pagination;
      assert.equal(p.result_count, res.body.data[0].series.length);
      if (!p.has_more) return { pages, series: pages.flat() };
      cursor = p.next_cursor;
    }
  }

  before(async () => {
    sys = await startSystem();
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
  });
  after(() => sys?.stop());

  it('records per series the model, parameters, validation, class and intervals of the forecast written', async () => {
    const job = await run({ item_name: 'SKU-0002', forecast_periods: 6 });
    const list = await get(RUNS);
    assert.equal(list.status, 200, list.text);
    const listed = list.body.data.find((r: any) => r.job_id === job);
    assert.ok(listed, 'the run is listed');
    itemRun = { job, id: listed.id };
    assert.equal(listed.status, 'succeeded');
    assert.equal(listed.scope, 'item');
    assert.equal(listed.algorithm, 'auto');
    assert.equal(listed.forecast_periods, 6);
    assert.deepEqual(listed.counts, { series: 4, forecast: 4, skipped: 0, failed: 0 });
    assert.ok(listed.finished_at && listed.created_at <= listed.finished_at);
    assert.ok(listed.accuracy && listed.accuracy.series > 0, JSON.stringify(listed.accuracy));
    assert.ok(listed.accuracy.mean_mase > 0);

    const detail = await get(`${RUNS}/${itemRun.id}`);
    assert.equal(detail.status, 200, detail.text);
    const { series, ...runPart } = detail.body.data[0];
    assert.deepEqual(runPart, listed);
    assert.equal(series.length, 4);
    assert.deepEqual(
      series.map((s: any) => s.position),
      [0, 1, 2, 3],
    );
    const sales = await get('/demo/api/v1/sales-data?filter[sale_type_name]=Forecast&filter[item_name]=SKU-0002&per_page=5000');
    for (const s of series) {
      assert.equal(s.item_name, 'SKU-0002');
      assert.equal(s.status, 'forecast');
      assert.ok(s.model.length > 0);
      assert.ok(CLASSES.includes(s.series_class), s.series_class);
      assert.equal(typeof s.parameters, 'object');
      assert.ok(s.validation, 'validated on its own history');
      assert.equal(s.timing_interval, 'week');
      assert.equal(s.history_periods, 104);
      assert.equal(s.periods.length, 6);
      const written = sales.body.data.filter((r: any) => r.customer_group_name === s.customer_group_name);
      assert.deepEqual(
        s.periods.map((p: any) => [p.date, p.forecast]),
        written.map((r: any) => [r.sell_date, r.quantity]),
        'the forecast recorded is the one written',
      );
      for (const p of s.periods) {
        assert.ok(p.lo95 >= 0 && p.lo95 <= p.lo80 && p.lo80 <= p.forecast && p.forecast <= p.hi80 && p.hi80 <= p.hi95, JSON.stringify(p));
        assert.ok(p.hi95 > p.lo95, 'an interval has width');
      }
    }
  });

  it('filters series by item, customer group, model (or its family) and class, and paginates with cursors both ways', async () => {
    const job = await run({ customer_group_name: 'Wholesale', forecast_periods: 4 });
    const list = await get(`${RUNS}?per_page=1`);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].job_id, job, 'newest first');
    groupRun = { job, id: list.body.data[0].id };
    assert.equal(list.body.meta.pagination.prev_cursor, null);
    const second = await get(`${RUNS}?per_page=1&cursor=${encodeURIComponent(list.body.meta.pagination.next_cursor)}`);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.data[0].id, itemRun.id);
    const back = await get(`${RUNS}?per_page=1&cursor=${encodeURIComponent(second.body.meta.pagination.prev_cursor)}`);
    assert.deepEqual(
      back.body.data.map((r: any) => r.id),
      [groupRun.id],
    );

    const all = await walk(groupRun.id, '', 20);
    assert.deepEqual(
      all.pages.map((p) => p.length),
      [20, 20, 8],
    );
    assert.deepEqual(
      all.series.map((s: any) => s.position),
      [...Array(48).keys()],
    );
    assert.ok(all.series.every((s: any) => s.customer_group_name === 'Wholesale' && s.periods.length === 4));

    // Walking back from the second page gives the first again.
    const page1 = await get(`${RUNS}/${groupRun.id}?per_page=20`);
    const page2 = await get(`${RUNS}/${groupRun.id}?per_page=20&cursor=${encodeURIComponent(page1.body.meta.pagination.next_cursor)}`);
    const again = await get(`${RUNS}/${groupRun.id}?per_page=20&cursor=${encodeURIComponent(page2.body.meta.pagination.prev_cursor)}`);
    assert.deepEqual(
      again.body.data[0].series.map((s: any) => s.position),
      [...Array(20).keys()],
    );
    // A cursor is good only for its own query.
    const crossed = await get(
      `${RUNS}/${groupRun.id}?per_page=20&filter[series_class]=smooth&cursor=${encodeURIComponent(page1.body.meta.pagination.next_cursor)}`,
    );
    assert.equal(crossed.status, 422, crossed.text);
    assert.ok(crossed.body.errors.cursor);

    const items = await walk(groupRun.id, '&filter[item_name]=sku-0003, SKU-0005', 100);
    assert.deepEqual(
      items.series.map((s: any) => s.item_name),
      ['SKU-0003', 'SKU-0005'],
    );
    const retail = await walk(itemRun.id, '&filter[customer_group_name]=Retail', 100);
    assert.deepEqual(
      retail.series.map((s: any) => s.customer_group_name),
      ['Retail'],
    );

    const model = all.series[0].model as string;
    const family = model.replace(/\(.*$/, '');
    const byModel = await walk(groupRun.id, `&filter[model]=${encodeURIComponent(model)}`, 7);
    assert.deepEqual(
      byModel.series.map((s: any) => s.position),
      all.series.filter((s: any) => s.model === model).map((s: any) => s.position),
    );
    const byFamily = await walk(groupRun.id, `&filter[model]=${encodeURIComponent(family.toUpperCase())}`, 7);
    assert.deepEqual(
      byFamily.series.map((s: any) => s.position),
      all.series.filter((s: any) => s.model.replace(/\(.*$/, '') === family).map((s: any) => s.position),
    );
    const cls = all.series[all.series.length - 1].series_class as string;
    const byClass = await walk(groupRun.id, `&filter[series_class]=${cls}`, 5);
    assert.ok(byClass.series.length > 0);
    assert.deepEqual(
      byClass.series.map((s: any) => s.position),
      all.series.filter((s: any) => s.series_class === cls).map((s: any) => s.position),
    );
    const none = await walk(groupRun.id, '&filter[series_class]=smooth&filter[item_name]=no-such-item', 5);
    assert.equal(none.series.length, 0);
  });

  it('answers 404 for another tenant’s run, an unknown id or a malformed one; 400 for an unknown filter; 422 for a bad per_page', async () => {
    const acme = await sys.tokenFor('acme', 'admin@acme.test', ['public_api.read']);
    const crossed = await get(`/acme/api/v1/forecasts/runs/${itemRun.id}`, acme);
    assert.equal(crossed.status, 404, crossed.text);
    assert.equal(crossed.body.type, '/problems/not-found');
    const acmeList = await get('/acme/api/v1/forecasts/runs', acme);
    assert.equal(acmeList.status, 200, acmeList.text);
    assert.ok(!acmeList.body.data.some((r: any) => r.id === itemRun.id || r.id === groupRun.id));
    for (const id of ['999999', 'abc', '0', '1e3']) assert.equal((await get(`${RUNS}/${id}`)).status, 404, id);
    const unknown = await get(`${RUNS}/${itemRun.id}?filter[colour]=red`);
    assert.equal(unknown.status, 400, unknown.text);
    assert.equal((await get(`${RUNS}?per_page=0`)).status, 422);
    assert.equal((await get(`${RUNS}/${itemRun.id}?per_page=1001`)).status, 422);
    assert.equal((await get(`${RUNS}?cursor=garbage`)).status, 422);
  });

  it('fits a series without its data-entry error and says so in the parameters', async () => {
    // One week of SKU-0001's history typed with four extra zeros, synced as any correction would be.
    const history = await get(
      '/demo/api/v1/sales-data?filter[sale_type_name]=History&filter[item_name]=SKU-0001&filter[customer_group_name]=Retail&sort=sell_date&per_page=500',
    );
    assert.equal(history.status, 200, history.text);
    const weeks = history.body.data as { sell_date: string; quantity: number }[];
    assert.ok(weeks.length > 50, `${weeks.length} weeks`);
    const typo = weeks[Math.floor(weeks.length / 2)]!;
    const largest = Math.max(...weeks.map((w) => w.quantity));
    const sync = await api(sys, '/demo/api/v1/workflows/sync-sales', {
      method: 'POST',
      token,
      body: { mode: 'upsert', data: [salesRow(typo.sell_date, typo.quantity * 10_000 + 10_000, { timing_interval: 'week' })] },
    });
    assert.equal(sync.status, 202, sync.text);
    assert.equal((await waitForJob(sys, 'demo', token, sync.body.data[0].job_id, 60_000)).status, 'succeeded');

    const job = await run({ item_name: 'SKU-0001', customer_group_name: 'Retail', forecast_periods: 6 });
    const listed = (await get(RUNS)).body.data.find((r: any) => r.job_id === job);
    const { series } = await walk(listed.id, '', 10);
    assert.equal(series.length, 1);
    const [s] = series;
    assert.equal(s.parameters.spikes_replaced, 1, JSON.stringify(s.parameters));
    for (const p of s.periods) assert.ok(p.hi95 <= 3 * largest, `${JSON.stringify(p)} against a largest week of ${largest}`);
  });

  it('is a read of the demand module: 1 credit; 403 without public_api.read or without access to demand', async () => {
    const computeOnly = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.compute']);
    const noDemand = await sys.tokenFor('demo', 'nodemand@demo.test', ['*']);
    for (const [who, t, slug] of [
      ['token without the read scope', computeOnly, 'insufficient-scope'],
      ['no access to demand', noDemand, 'insufficient-permission'],
    ] as const) {
      for (const path of [RUNS, `${RUNS}/${itemRun.id}`]) {
        const res = await get(path, t);
        assert.equal(res.status, 403, `${who}: ${res.text}`);
        assert.equal(res.body.type, `/problems/${slug}`, who);
      }
    }
    // Metered as reads: one credit each.
    const first = await get(RUNS);
    const second = await get(`${RUNS}/${itemRun.id}`);
    const third = await get(RUNS);
    const remaining = [first, second, third].map((r) => Number(r.headers.get('credits-remaining')));
    assert.deepEqual([remaining[0]! - remaining[1]!, remaining[1]! - remaining[2]!], [1, 1], JSON.stringify(remaining));
    const viewer = await sys.tokenFor('demo', 'viewer@demo.test', ['public_api.read']);
    assert.equal((await get(RUNS, viewer)).status, 200);
    assert.equal((await api(sys, RUNS)).status, 401);
  });
});
