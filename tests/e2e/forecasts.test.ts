import assert from 'node:assert/strict';
import { api, startSystem, type TestSystem } from '../support/system';
import { readJob, waitForJob } from './workflows-support';

const GENERATE = '/demo/api/v1/forecasts/generate';
const call = { context: { requestId: 'test', tenant: 'demo' } };
const WEEKS_2025 = [
  '2025-01-06',
  '2025-01-13',
  '2025-01-20',
  '2025-01-27',
  '2025-02-03',
  '2025-02-10',
  '2025-02-17',
  '2025-02-24',
  '2025-03-03',
  '2025-03-10',
  '2025-03-17',
  '2025-03-24',
];

describe('forecasts: POST /forecasts/generate', function () {
  this.timeout(90_000);
  let sys: TestSystem;
  let token: string;

  const generate = (body: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) =>
    api(sys, GENERATE, { method: 'POST', token: opts.token ?? token, body, headers: opts.headers });

  /** Generates and follows the job to its end. */
  async function run(body: Record<string, unknown>) {
    const res = await generate(body);
    assert.equal(res.status, 202, res.text);
    return waitForJob(sys, 'demo', token, res.body.data[0].job_id, 60_000);
  }

  /** The Forecast records /sales-data shows for an item (and customer group), by date. */
  async function forecastsOf(item: string, group?: string) {
    const filters = `filter[sale_type_name]=Forecast&filter[item_name]=${item}${group ? `&filter[customer_group_name]=${group}` : ''}`;
    const res = await api(sys, `/demo/api/v1/sales-data?${filters}&sort=customer_group_name,sell_date&per_page=5000`, { token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta.pagination.has_more, false);
    return res.body.data as Array<{
      item_name: string;
      customer_group_name: string;
      sell_date: string;
      quantity: number;
      sale_type_name: string;
      timing_interval: string;
      uom_abbr: string;
    }>;
  }

  async function allForecastCount(): Promise<number> {
    let count = 0;
    let cursor = '';
    for (;;) {
      const res = await api(
        sys,
        `/demo/api/v1/sales-data?filter[sale_type_name]=Forecast&per_page=5000${cursor ? `&cursor=${cursor}` : ''}`,
        { token },
      );
      count += res.body.data.length;
      if (!res.body.meta.pagination.has_more) return count;
      cursor = encodeURIComponent(res.body.meta.pagination.next_cursor);
    }
  }

  before(async () => {
    sys = await startSystem();
    // These tests make more requests a minute than one token's default rate limit.
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
  });
  after(() => sys?.stop());

  it('forecasts one series: 202 with the queued job, which succeeds; the forecasts read back through /sales-data and legacy GET /sales', async () => {
    const res = await generate({ item_name: 'SKU-0001', customer_group_name: 'Retail' });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.data.length, 1);
    const accepted = res.body.data[0];
    assert.equal(typeof accepted.job_id, 'number');
    assert.equal(accepted.status, 'queued');
    assert.equal(accepted.kind, 'forecast_run');
    assert.deepEqual(accepted.progress, { processed: 0, total: 1 });
    assert.deepEqual(accepted.forecast, {
      scope: 'series',
      series_count: 1,
      forecast_periods: 12,
      timing_interval: 'week',
      history_start: null,
      history_end: '2024-12-30',
      forecast_start: '2025-01-06',
      forecast_end: '2025-03-24',
      algorithm: 'auto',
      missing_imputation: 'auto',
      forecast_constraint: 'auto',
    });
    assert.equal(res.headers.get('location'), `/demo/api/v1/jobs/${accepted.job_id}`);
    assert.deepEqual(res.body.meta, {});
    assert.equal(res.body.links, '/demo/api/v1/forecasts/generate');

    const job = await waitForJob(sys, 'demo', token, accepted.job_id);
    assert.equal(job.status, 'succeeded', job.message);
    assert.deepEqual(job.progress, { processed: 1, total: 1 });
    assert.deepEqual(job.result, { created: 12, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    const viaHttp = await api(sys, `/demo/api/v1/jobs/${accepted.job_id}`, { token });
    assert.equal(viaHttp.body.data[0].status, 'succeeded');

    const records = await forecastsOf('SKU-0001', 'Retail');
    assert.deepEqual(
      records.map((r) => r.sell_date),
      WEEKS_2025,
    );
    for (const r of records) {
      assert.equal(r.sale_type_name, 'Forecast');
      assert.equal(r.timing_interval, 'week');
      assert.equal(r.uom_abbr, 'ea');
      assert.ok(Number.isInteger(r.quantity) && r.quantity >= 0, `whole, non-negative units: ${r.quantity}`);
    }

    const legacy = await api(sys, '/demo/api/v1/sales?sale_type_name=Forecast&start_date=2025-01-06&duration=84&pagination_count=5000', {
      token,
    });
    assert.equal(legacy.status, 200, legacy.text);
    const mine = legacy.body.sales.filter((s: any) => s.item_name === 'SKU-0001' && s.customer_group_name === 'Retail');
    assert.deepEqual(
      mine.map((s: any) => [s.sell_date, s.quantity, s.sale_type_name, s.timing_interval_span]).sort(),
      records.map((r) => [r.sell_date, r.quantity, 'Forecast', 'week']).sort(),
    );

    // The model chosen and its holdout error, recorded for the series.
    const principal = await sys.clients.tokens.authenticate({ token }, call);
    const diagnostics = await sys.clients.compute.listForecastSeries(
      { job_id: accepted.job_id, from_position: 0, limit: 10 },
      {
        context: {
          ...call.context,
          principal: {
            tenant: 'demo',
            tokenId: principal.token_id,
            userId: principal.user_id,
            scopes: principal.scopes,
            isAdmin: principal.is_admin,
          },
        },
      },
    );
    assert.equal(diagnostics.series.length, 1);
    const [only] = diagnostics.series;
    assert.equal(only!.status, 'forecast');
    assert.equal(only!.series!.item_name, 'SKU-0001');
    assert.ok(only!.model.length > 0);
    assert.ok(only!.has_holdout_error && only!.holdout_error >= 0);
    assert.equal(only!.history_periods, 104);
  });

  it('forecasts every customer group of an item; re-running replaces rather than duplicates, with the same values', async () => {
    const first = await run({ item_name: 'SKU-0002', forecast_periods: 6 });
    assert.equal(first.status, 'succeeded', first.message);
    // SKU-0002 is stocked at Partner-Mart too, so the partner's own account buys it: four customer groups.
    assert.deepEqual(first.progress, { processed: 4, total: 4 });
    assert.deepEqual(first.result, { created: 24, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
    const before = await forecastsOf('SKU-0002');
    assert.equal(before.length, 24);
    assert.deepEqual([...new Set(before.map((r) => r.customer_group_name))], ['Online', 'Partner-Mart', 'Retail', 'Wholesale']);

    // Same input, same forecast: every record matched unchanged.
    const again = await run({ item_name: 'SKU-0002', forecast_periods: 6 });
    assert.deepEqual(again.result, { created: 0, updated: 0, deleted: 0, unchanged: 24, failed: 0 });
    const same = await forecastsOf('SKU-0002');
    assert.deepEqual(
      same.map((r) => [r.customer_group_name, r.sell_date, r.quantity]),
      before.map((r) => [r.customer_group_name, r.sell_date, r.quantity]),
    );

    // A shorter horizon replaces the earlier forecast: the periods it no longer covers go (the
    // ones it keeps may change: the holdout that picks the model is as long as the horizon).
    const shorter = await run({ item_id: await itemId('SKU-0002'), forecast_periods: 4 });
    assert.equal(shorter.status, 'succeeded', shorter.message);
    assert.equal(shorter.result.created, 0);
    assert.equal(shorter.result.updated + shorter.result.unchanged, 16);
    assert.equal(shorter.result.deleted, 8);
    const after = await forecastsOf('SKU-0002');
    assert.deepEqual(
      after.map((r) => r.sell_date),
      [...WEEKS_2025.slice(0, 4), ...WEEKS_2025.slice(0, 4), ...WEEKS_2025.slice(0, 4), ...WEEKS_2025.slice(0, 4)],
    );
    // The series forecast earlier by another run keeps its forecast.
    assert.equal((await forecastsOf('SKU-0001', 'Retail')).length, 12);
  });

  async function itemId(name: string): Promise<number> {
    const res = await api(sys, `/demo/api/v1/items?filter[name]=${name}`, { token });
    return res.body.data[0].id;
  }

  it('forecasts a customer group’s series with a named model, history window and constraint', async () => {
    const job = await run({
      customer_group_name: 'Wholesale',
      algorithm: 'ses',
      forecast_constraint: 'non_negative',
      missing_imputation: 'zero',
      history_start: '2024-01-01T00:00:00Z',
      history_end: '2024-12-30T23:59:59+00:00',
      forecast_periods: 2,
    });
    assert.equal(job.status, 'succeeded', job.message);
    assert.equal(job.progress.total, 48);
    assert.equal(job.result.failed, 0);
    assert.equal(job.result.created + job.result.updated + job.result.unchanged, 96);
    const wholesale = (await forecastsOf('SKU-0003')).filter((r) => r.customer_group_name === 'Wholesale');
    assert.deepEqual(
      wholesale.map((r) => r.sell_date),
      WEEKS_2025.slice(0, 2),
    );
    // Simple exponential smoothing forecasts a flat line.
    assert.equal(wholesale[0]!.quantity, wholesale[1]!.quantity);
  });

  it('dry run: 200 with exactly one element describing the run, and writes nothing', async () => {
    const forecastsBefore = await allForecastCount();
    const runsBefore = (await sys.clients.compute.listModelRuns({ job_id: 0, limit: 1000 }, call)).runs.length;
    const res = await generate({ scope: 'all', dry_run: true, forecast_periods: 26 });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.message, /^Dry run completed: the forecast request validated\./);
    assert.equal(res.body.data.length, 1);
    const dry = res.body.data[0];
    assert.equal(dry.dry_run, true);
    assert.equal(dry.scope, 'all');
    assert.equal(dry.series_count, 156, '48 items x 3 shared customer groups, and the 12 items Partner-Mart buys');
    assert.equal(dry.series.length, 100);
    assert.deepEqual(Object.keys(dry.series[0]).sort(), [
      'customer_group_id',
      'customer_group_name',
      'item_customer_group_id',
      'item_id',
      'item_name',
    ]);
    assert.equal(dry.forecast_periods, 26);
    assert.equal(dry.timing_interval, 'week');
    assert.equal(dry.history_end, '2024-12-30');
    assert.equal(dry.forecast_start, '2025-01-06');
    assert.equal(dry.forecast_end, '2025-06-30');
    assert.equal(await allForecastCount(), forecastsBefore);
    assert.equal((await sys.clients.compute.listModelRuns({ job_id: 0, limit: 1000 }, call)).runs.length, runsBefore);
  });

  it('answers 422 naming the field for bad values, unknown names and ids, and conflicting identifiers', async () => {
    const expect422 = async (body: unknown, field: string, message?: RegExp) => {
      const res = await generate(body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.ok(res.body.errors[field], `${JSON.stringify(body)} names ${field}: ${res.text}`);
      if (message) assert.match(res.body.errors[field][0], message);
      return res.body;
    };
    await expect422({ forecast_periods: 0 }, 'forecast_periods', /at least 1/);
    await expect422({ forecast_periods: 367 }, 'forecast_periods', /not be greater than 366/);
    await expect422({ forecast_periods: 2.5 }, 'forecast_periods');
    await expect422({ forecast_periods: '12' }, 'forecast_periods', /must be a number/);
    await expect422({ algorithm: 'prophet' }, 'algorithm', /^The selected algorithm is invalid\.$/);
    await expect422({ scope: 'region' }, 'scope', /^The selected scope is invalid\.$/);
    await expect422({ missing_imputation: 'mean' }, 'missing_imputation');
    await expect422({ forecast_constraint: 'positive' }, 'forecast_constraint');
    await expect422({ item_name: 'x'.repeat(256) }, 'item_name', /255 characters/);
    await expect422({ customer_group_name: 'x'.repeat(256) }, 'customer_group_name');
    await expect422({ item_id: 0 }, 'item_id');
    await expect422({ dry_run: 'maybe' }, 'dry_run');
    await expect422({ history_start: 'yesterday' }, 'history_start', /valid date-time/);
    await expect422(
      { history_start: '2024-06-01T00:00:00Z', history_end: '2024-01-01T00:00:00Z' },
      'history_end',
      /after or equal to history start/,
    );
    const many = await expect422({ forecast_periods: 0, algorithm: 'x', scope: 'y' }, 'forecast_periods');
    assert.match(many.message, /\(and 2 more errors\)$/);

    await expect422({ item_name: 'NO-SUCH-ITEM' }, 'item_name', /^The selected item name is invalid\.$/);
    await expect422({ item_id: 999_999 }, 'item_id', /^The selected item id is invalid\.$/);
    await expect422({ customer_group_name: 'Nowhere' }, 'customer_group_name');
    await expect422({ customer_group_id: 999_999 }, 'customer_group_id');
    await expect422({ item_customer_group_id: 999_999 }, 'item_customer_group_id', /invalid/);
    const sku2 = await itemId('SKU-0002');
    await expect422({ item_name: 'SKU-0001', item_id: sku2 }, 'item_id', /is not the item named "SKU-0001"/);
    await expect422(
      { item_customer_group_id: 1, item_name: 'SKU-0002' },
      'item_customer_group_id',
      /not a combination of the item "SKU-0002"/,
    );
    await expect422({ scope: 'all', item_name: 'SKU-0001' }, 'scope', /leave out the item and customer group/);
    await expect422({ scope: 'item', customer_group_name: 'Retail' }, 'scope');
    await expect422({ scope: 'series', item_name: 'SKU-0001' }, 'scope');
    await expect422([{ item_name: 'SKU-0001' }], 'body');
    await expect422({ forecast_period: 6 }, 'forecast_period', /^The forecast period field is prohibited\.$/);
  });

  it('answers 403 to a token without the compute scope and to a user without access to demand', async () => {
    const readOnly = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    const noDemand = await sys.tokenFor('demo', 'nodemand@demo.test', ['*']);
    for (const [who, t, slug] of [
      ['read-only token', readOnly, 'insufficient-scope'],
      ['no access to demand', noDemand, 'insufficient-permission'],
    ] as const) {
      const res = await generate({ item_name: 'SKU-0001', customer_group_name: 'Retail', dry_run: true }, { token: t });
      assert.equal(res.status, 403, `${who}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(res.body.type, `/problems/${slug}`, who);
    }
    assert.equal((await api(sys, GENERATE, { method: 'POST', body: {} })).status, 401);
  });

  it('forecasts every series; Idempotency-Key replays the first answer; a second run while one is in progress is a 503 with Retry-After', async () => {
    const key = { 'Idempotency-Key': 'forecast-all-1' };
    const first = await generate({ scope: 'all' }, { headers: key });
    assert.equal(first.status, 202, first.text);
    const jobId = first.body.data[0].job_id;
    assert.equal(first.body.data[0].forecast.series_count, 156);

    const replay = await generate({ scope: 'all' }, { headers: key });
    assert.equal(replay.status, 202, replay.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body.data, first.body.data);
    const otherBody = await generate({ scope: 'all', forecast_periods: 3 }, { headers: key });
    assert.equal(otherBody.status, 422);
    assert.ok(otherBody.body.errors['Idempotency-Key']);

    const busy = await generate({ item_name: 'SKU-0001', customer_group_name: 'Online' });
    assert.equal(busy.status, 503, busy.text);
    assert.match(busy.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(busy.body.type, '/problems/service-unavailable');
    assert.match(busy.body.detail, new RegExp(`job ${jobId}`));
    assert.ok(Number(busy.headers.get('retry-after')) > 0);

    const job = await waitForJob(sys, 'demo', token, jobId, 60_000);
    assert.equal(job.status, 'succeeded', job.message);
    assert.deepEqual(job.progress, { processed: 156, total: 156 });
    const { created, updated, unchanged, failed } = job.result;
    assert.equal(created + updated + unchanged, 156 * 12);
    assert.equal(failed, 0);
    // Every series' forecast is now this run's: 12 periods each, nothing left over from earlier runs.
    assert.equal(await allForecastCount(), 156 * 12);
    assert.equal((await forecastsOf('SKU-0002')).length, 48);

    // The tenant is free again as soon as the job says it finished.
    const next = await generate({ item_name: 'SKU-0001', customer_group_name: 'Online' });
    assert.equal(next.status, 202, next.text);
    assert.equal((await readJob(sys, 'demo', token, jobId)).status, 'succeeded');
    await waitForJob(sys, 'demo', token, next.body.data[0].job_id);
  });

  it('publishes the enumerations in the OpenAPI document', async () => {
    const doc = (await api(sys, '/openapi.json')).body;
    const ref: string = doc.paths['/{tenant}/api/v1/forecasts/generate'].post.requestBody.content['application/json'].schema.$ref;
    const schema = doc.components.schemas[ref.split('/').pop()!];
    const enumOf = (field: string) => schema.properties[field].anyOf.find((s: any) => s.enum).enum;
    assert.deepEqual(enumOf('scope'), ['series', 'item', 'customer_group', 'all']);
    assert.ok(enumOf('algorithm').includes('auto') && enumOf('algorithm').includes('croston'));
    assert.deepEqual(enumOf('missing_imputation'), ['auto', 'zero', 'linear', 'forward_fill', 'none']);
    assert.deepEqual(enumOf('forecast_constraint'), ['auto', 'non_negative', 'integer', 'none']);
    assert.equal(schema.properties.history_start.format, 'date-time');
  });
});
