import assert from 'node:assert/strict';
import { openPlanRepositories } from '@supply/compute';
import { skipBecause } from '../support/require';
import { api, DISTRIBUTED, startSystem, type TestSystem } from '../support/system';
import { waitForJob } from './workflows-support';

const GENERATE = '/demo/api/v1/supply-plans/generate';
const call = { context: { requestId: 'test', tenant: 'demo' } };
const MRP_FIELDS = [
  'gross_requirements',
  'scheduled_receipts',
  'projected_available',
  'net_requirements',
  'planned_receipts',
  'planned_releases',
];
const near = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-6, `${what}: ${actual} != ${expected}`);

describe('supply plans: POST /supply-plans/generate', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let token: string;

  const get = (path: string, as = token) => api(sys, `/demo/api/v1/${path}`, { token: as });
  const generate = (body: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) =>
    api(sys, GENERATE, { method: 'POST', token: opts.token ?? token, body, headers: opts.headers });

  /** Every record of a cursor list. */
  async function walk(path: string): Promise<any[]> {
    const all: any[] = [];
    let next: string | null = null;
    do {
      const res = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=5000${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      all.push(...res.body.data);
      next = res.body.meta.pagination.next_cursor;
    } while (next);
    return all;
  }

  async function itemLocation(item: string, location: string) {
    const res = await get(`item-locations?filter[item_name]=${item}&filter[location_name]=${location}`);
    assert.equal(res.body.data.length, 1, res.text);
    return res.body.data[0];
  }

  before(async () => {
    sys = await startSystem();
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
  });
  after(() => sys?.stop());

  describe('one item-location, synchronously', () => {
    let il: any;
    let first: Awaited<ReturnType<typeof generate>>;

    before(async () => {
      il = await itemLocation('SKU-0020', 'DC-East');
      // Known parameters, so a bucket can be checked by hand.
      const patched = await api(sys, `/demo/api/v1/item-locations/${il.id}`, {
        method: 'PATCH',
        token,
        body: { lead_time: 1, safety_stock: 20, min_order_qty: 0, order_multiple: 0, max_order_qty: 0, lot_sizing_rule: 'lot_for_lot' },
      });
      assert.equal(patched.status, 200, patched.text);
      first = await generate({ mode: 'standard', item_name: 'SKU-0020', location_name: 'DC-East' });
    });

    it('answers 200 with the MRP record per bucket, and a hand-checked first two buckets', async () => {
      assert.equal(first.status, 200, first.text);
      const { data, meta, message, links } = first.body;
      assert.equal(links, GENERATE);
      assert.match(message, /^Supply plan generated for SKU-0020 at DC-East: 52 week buckets of view Default, standard mode/);
      assert.equal(data.length, 52, 'the Default view plans 52 weeks');
      assert.deepEqual(Object.keys(data[0]), [
        'plan_run_id',
        'view_id',
        'view_name',
        'item_location_id',
        'item_id',
        'item_name',
        'location_id',
        'location_name',
        'period_start',
        ...MRP_FIELDS,
      ]);
      assert.deepEqual([data[0].period_start, data[1].period_start, data[51].period_start], ['2025-01-06', '2025-01-13', '2025-12-29']);
      assert.deepEqual([data[0].item_location_id, data[0].view_name, data[0].plan_run_id], [il.id, 'Default', meta.plan_run_id]);

      // By hand: the item sells to three customer groups and is stocked at two locations, which share its demand;
      // with no Forecast the demand of a week is the History of the same week a year earlier.
      const placements = await get('item-locations?filter[item_name]=SKU-0020');
      assert.equal(placements.body.data.length, 2);
      const lastYear = async (from: string, to: string) => {
        const res = await get(
          `sales-data?filter[item_name]=SKU-0020&filter[sale_type_name]=History&filter[sell_date_from]=${from}&filter[sell_date_to]=${to}`,
        );
        assert.equal(res.body.data.length, 3, 'one weekly record per customer group');
        return res.body.data.reduce((sum: number, r: any) => sum + r.quantity, 0) / 2;
      };
      const gross = [await lastYear('2024-01-08', '2024-01-14'), await lastYear('2024-01-15', '2024-01-21')];
      const stock = await get('inventory?filter[item_name]=SKU-0020&filter[location_name]=DC-East');
      const onHand = stock.body.data[0].quantity;
      assert.deepEqual(meta.on_hand, { quantity: onHand, inventory_date: '2025-01-05' });

      // Lot-for-lot, safety stock 20, lead time 1: each week orders what keeps 20 in stock.
      let previous = onHand;
      const receipts: number[] = [];
      for (const t of [0, 1]) {
        const balance = previous - gross[t]!;
        const net = Math.max(0, 20 - balance);
        receipts.push(net);
        near(data[t].gross_requirements, gross[t]!, `gross ${t}`);
        assert.equal(data[t].scheduled_receipts, 0);
        near(data[t].net_requirements, net, `net ${t}`);
        near(data[t].planned_receipts, net, `receipt ${t}`);
        near(data[t].projected_available, balance + net, `projected ${t}`);
        previous = balance + net;
      }
      // Week 0's receipt should have been released a week before plan start: it is past due, released now.
      near(data[0].planned_releases, receipts[0]! + receipts[1]!, 'release 0');
      assert.equal(
        meta.exceptions.some((e: any) => e.type === 'release_in_past'),
        receipts[0]! > 0,
      );

      assert.deepEqual(meta.demand, {
        source: 'history',
        basis: 'forecast_else_history',
        customer_groups: ['Retail', 'Online', 'Wholesale'],
        share: 0.5,
        forecast_buckets: 0,
        history_buckets: 52,
        mixed_buckets: 0,
      });
      assert.deepEqual(
        [
          meta.mode,
          meta.supply_policy,
          meta.bucket,
          meta.lot_policy.lot_sizing_rule,
          meta.lot_policy.lead_time,
          meta.lot_policy.safety_stock,
        ],
        ['standard', 'unconstrained', 'week', 'lot_for_lot', 1, 20],
      );
      assert.ok(
        data.every((row: any) => row.projected_available >= 20 - 1e-9),
        'unconstrained supply keeps safety stock',
      );
    });

    it('stores the rows and the financial plan, readable through /supply-plans, /financial-plans and the legacy read', async () => {
      const { data, meta } = first.body;
      const stored = await walk('supply-plans?filter[item_name]=SKU-0020&filter[location_name]=DC-East&sort=period_start');
      assert.equal(stored.length, 52);
      assert.deepEqual(
        stored.map((r) => [r.plan_run_id, r.period_start, ...MRP_FIELDS.map((f) => r[f])]),
        data.map((r: any) => [r.plan_run_id, r.period_start, ...MRP_FIELDS.map((f) => r[f])]),
      );

      const item = (await get('items?filter[name]=SKU-0020')).body.data[0];
      const financial = await walk('financial-plans?filter[item_name]=SKU-0020&filter[location_name]=DC-East&sort=period_start');
      assert.equal(financial.length, 52);
      const [row0] = financial;
      const cost = il.unit_cost;
      near(row0.satisfied_demand, data[0].gross_requirements, 'satisfied: all demand met when supply is unconstrained');
      near(row0.revenue, data[0].gross_requirements * item.unit_price, 'revenue');
      near(row0.cost_of_goods, data[0].gross_requirements * cost, 'cost of goods');
      near(row0.gross_margin, row0.revenue - row0.cost_of_goods, 'margin');
      near(row0.purchase_spend, data[0].planned_receipts * cost, 'purchase spend in the receipt week');
      near(row0.inventory_value, data[0].projected_available * cost, 'inventory value');
      near(
        meta.financial.totals.revenue,
        financial.reduce((s, r) => s + r.revenue, 0),
        'revenue total',
      );
      assert.deepEqual([meta.financial.unit_cost, meta.financial.unit_price], [cost, item.unit_price]);

      const legacy = await get('supply-plan/get/process?item_name=SKU-0020&location_name=DC-East&view_name=Default');
      assert.equal(legacy.status, 200, legacy.text);
      assert.equal(legacy.body.total, 52);
      assert.deepEqual(
        legacy.body.supply_plans.map((r: any) => [r.period_start, r.planned_receipts, r.projected_available]),
        data.map((r: any) => [r.period_start, r.planned_receipts, r.projected_available]),
      );
    });

    it('replaces the rows when planned again', async () => {
      const before = await walk('supply-plans?filter[item_name]=SKU-0020&filter[location_name]=DC-East&sort=period_start');
      await api(sys, `/demo/api/v1/item-locations/${il.id}`, { method: 'PATCH', token, body: { safety_stock: 45 } });
      const again = await generate({ mode: 'standard', item_location_id: il.id });
      assert.equal(again.status, 200, again.text);
      assert.notEqual(again.body.meta.plan_run_id, first.body.meta.plan_run_id);
      const after = await walk('supply-plans?filter[item_name]=SKU-0020&filter[location_name]=DC-East&sort=period_start');
      assert.equal(after.length, 52, 'one row per bucket, none left from the earlier run');
      assert.ok(after.every((r) => r.plan_run_id === again.body.meta.plan_run_id));
      assert.deepEqual(
        after.map((r) => r.id),
        before.map((r) => r.id),
        'the same bucket rows, rewritten',
      );
      assert.ok(after.every((r) => r.projected_available >= 45 - 1e-9));
      const financial = await walk('financial-plans?filter[item_name]=SKU-0020&filter[location_name]=DC-East');
      assert.ok(financial.length === 52 && financial.every((r) => r.plan_run_id === again.body.meta.plan_run_id));
    });

    it('replays an Idempotency-Key: the first answer again, no second run; another body with it is a 422', async () => {
      const headers = { 'Idempotency-Key': 'plan-sku-0020-once' };
      const once = await generate({ mode: 'standard', item_location_id: il.id }, { headers });
      assert.equal(once.status, 200, once.text);
      assert.equal(once.headers.get('idempotent-replayed'), null);
      const twice = await generate({ mode: 'standard', item_location_id: il.id }, { headers });
      assert.equal(twice.status, 200);
      assert.equal(twice.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(twice.body.data, once.body.data);
      const runs = await sys.clients.compute.listModelRuns({ job_id: 0, limit: 1 }, call);
      assert.equal(runs.runs[0]!.id, once.body.meta.plan_run_id, 'the replay planned nothing');
      const other = await generate({ mode: 'auto', item_location_id: il.id }, { headers });
      assert.equal(other.status, 422);
      assert.ok(other.body.errors['Idempotency-Key']);
    });
  });

  describe('a view, as a job', () => {
    it('answers 202 with the queued job, which plans every item-location of Default to succeeded', async () => {
      const res = await generate({ mode: 'standard', view_name: 'Default' });
      assert.equal(res.status, 202, res.text);
      const [job] = res.body.data;
      assert.equal(typeof job.job_id, 'number');
      assert.equal(job.status, 'queued');
      assert.equal(job.kind, 'supply_plan_run');
      assert.deepEqual(job.progress, { processed: 0, total: 108 });
      assert.equal(res.headers.get('location'), `/demo/api/v1/jobs/${job.job_id}`);
      assert.deepEqual(res.body.meta, {});

      const done = await waitForJob(sys, 'demo', token, job.job_id, 90_000);
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      assert.deepEqual(done.progress, { processed: 108, total: 108 });
      assert.deepEqual(done.result, { created: 108, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      assert.match(
        done.message,
        /^Planned 108 of 108 item-locations of view Default \(standard mode, unconstrained supply, plan run \d+\)\.$/,
      );

      const rows = await walk('supply-plans?filter[view_name]=Default');
      assert.equal(rows.length, 108 * 52);
      assert.equal(new Set(rows.map((r) => r.item_location_id)).size, 108);
      const runIds = new Set(rows.map((r) => r.plan_run_id));
      assert.equal(runIds.size, 1, 'every row from the job run');
      const financial = await walk('financial-plans?filter[view_name]=Default');
      assert.equal(financial.length, 108 * 52);
      const legacy = await get('supply-plan/get/process?item_name=SKU-0048&location_name=DC-West');
      assert.equal(legacy.body.total, 52);
      assert.ok(legacy.body.supply_plans.every((r: any) => runIds.has(r.plan_run_id)));
    });

    it('answers 503 with Retry-After while compute runs as many view plans as it takes', async function () {
      // It fills compute's own store with running plans, which only an in-process system can reach.
      if (DISTRIBUTED) skipBecause(this, "it fills compute's store with running plans, which only the all-in-one system lets a test reach");
      const repos = await openPlanRepositories(await sys.proc.deps.openStore('compute'));
      const busy = Array.from({ length: 16 }, (_, i) => ({
        _id: 900_000 + i,
        tenant: 'acme',
        job_id: 0,
        principal: { tenant: 'acme', tokenId: 0, userId: 0, scopes: [], isAdmin: false },
        mode: 'standard' as const,
        supply_policy: 'unconstrained' as const,
        view_id: 0,
        view_name: '',
        bucket: 'week',
        period_starts: [],
        chunks: [],
        total: 0,
        dispatched: true,
        open: true,
        created_ms: Date.now(),
      }));
      await repos.jobs.insertMany(busy);
      try {
        const res = await generate({ mode: 'standard', view_name: 'Default' });
        assert.equal(res.status, 503, res.text);
        assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        assert.equal(res.headers.get('retry-after'), '10');
        assert.equal(res.body.type, '/problems/service-unavailable');
      } finally {
        await repos.jobs.deleteMany({ _id: { $gte: 900_000 } });
      }
      assert.equal(
        (await generate({ mode: 'standard', item_name: 'SKU-0001', location_name: 'DC-West' })).status,
        200,
        'one item-location is not a run',
      );
    });
  });

  describe('refusals', () => {
    it('422 for conflicting or incomplete identifiers, before spending credits', async () => {
      const cases: Array<[unknown, Record<string, string[]>]> = [
        [
          { mode: 'standard', item_location_id: 1, view_id: 1 },
          { view_id: ['The view id field prohibits item location id from being present: name one item-location or one view.'] },
        ],
        [
          { mode: 'standard', item_name: 'SKU-0001' },
          { location_name: ['The location name field is required when item name is present.'] },
        ],
        [
          { mode: 'standard' },
          {
            item_location_id: [
              'The item location id field is required when none of item name / location name / view id / view name are present.',
            ],
          },
        ],
        [{ item_location_id: 1 }, { mode: ['The mode field is required.'] }],
        [{ mode: 'fastest', item_location_id: 1 }, { mode: ['The selected mode is invalid.'] }],
        [{ mode: 'standard', view_name: 'x'.repeat(256) }, { view_name: ['The view name field must not be greater than 255 characters.'] }],
        [{ mode: 'standard', view_id: 1, colour: 'red' }, { colour: ['The colour field is prohibited.'] }],
        // (The gateway's shared message for a wrong type is not checked here: only that the field is named.)
        [{ mode: 'standard', item_location_id: 'one' }, { item_location_id: [] }],
      ];
      for (const [body, errors] of cases) {
        const res = await generate(body);
        assert.equal(res.status, 422, JSON.stringify(body));
        if (Object.values(errors).some((m) => m.length === 0)) assert.deepEqual(Object.keys(res.body.errors), Object.keys(errors));
        else assert.deepEqual(res.body.errors, errors, JSON.stringify(body));
        assert.equal(res.headers.get('credits-remaining'), null, 'a refused request spends nothing');
      }
    });

    it('422 for identifiers that name nothing', async () => {
      const cases: Array<[unknown, string, RegExp]> = [
        [{ mode: 'standard', item_location_id: 999_999 }, 'item_location_id', /^The selected item location id is invalid\.$/],
        [{ mode: 'standard', item_name: 'NOPE', location_name: 'DC-East' }, 'item_name', /^The selected item name is invalid\.$/],
        [
          { mode: 'standard', item_name: 'SKU-0001', location_name: 'Nowhere' },
          'location_name',
          /^The selected location name is invalid\.$/,
        ],
        [{ mode: 'standard', item_name: 'SKU-0001', location_name: 'Plant-Central' }, 'location_name', /is not stocked at Plant-Central/],
        [{ mode: 'standard', view_name: 'Nope' }, 'view_name', /^The selected view name is invalid\.$/],
        [{ mode: 'standard', view_id: 999_999 }, 'view_id', /^The selected view id is invalid\.$/],
      ];
      for (const [body, field, message] of cases) {
        const res = await generate(body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
        assert.deepEqual(Object.keys(res.body.errors), [field], JSON.stringify(body));
        assert.match(res.body.errors[field][0], message);
      }
    });

    it('403 for a token without the compute scope and for a user below planner on supply', async () => {
      const readOnly = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
      const scope = await generate({ mode: 'standard', view_name: 'Default' }, { token: readOnly });
      assert.equal(scope.status, 403);
      assert.equal(scope.body.type, '/problems/insufficient-scope');
      const viewerRead = await sys.tokenFor('demo', 'viewer@demo.test', ['public_api.read']);
      assert.equal((await generate({ mode: 'standard', view_name: 'Default' }, { token: viewerRead })).status, 403);

      await sys.clients.tokens.createUser(
        {
          email: 'supply-viewer@demo.test',
          password: 'supply-viewer-pw-123',
          is_admin: false,
          levels: { public_api: 'planner', supply: 'view' },
        },
        call,
      );
      const viewer = await sys.tokenFor('demo', 'supply-viewer@demo.test', ['public_api.compute', 'public_api.read']);
      const level = await generate({ mode: 'standard', view_name: 'Default' }, { token: viewer });
      assert.equal(level.status, 403, level.text);
      assert.equal(level.body.type, '/problems/insufficient-permission');
      assert.equal((await get('supply-plans?per_page=1', viewer)).status, 200, 'the viewer still reads plans');
    });
  });

  describe('partner mode: any item-location, from the demand it has', () => {
    /** The average of an item's sell-through at Partner-Mart over the 13 weeks before the Default view starts. */
    async function sellThroughAverage(item: string): Promise<number> {
      const res = await get(
        `sales-data?filter[item_name]=${item}&filter[customer_group_name]=Partner-Mart&filter[sale_type_name]=History&filter[sell_date_from]=2024-10-07&filter[sell_date_to]=2025-01-05&per_page=100`,
      );
      assert.equal(res.body.data.length, 13, 'the demo partner reports a week of sell-through for each of the 13 weeks');
      return res.body.data.reduce((sum: number, r: any) => sum + r.quantity, 0) / 13;
    }

    it("plans a partner item-location of the demo from the partner's sell-through and on-hand", async () => {
      const res = await generate({ mode: 'partner', item_name: 'SKU-0001', location_name: 'Partner-Mart' });
      assert.equal(res.status, 200, res.text);
      const average = await sellThroughAverage('SKU-0001');
      assert.ok(average > 0);
      assert.equal(res.body.data.length, 52);
      assert.ok(
        res.body.data.every((r: any) => Math.abs(r.gross_requirements - average) < 1e-9),
        'the 13-week average, every week',
      );
      assert.deepEqual(res.body.meta.demand, {
        source: 'sell_through',
        basis: 'sell_through_average',
        customer_groups: ['Partner-Mart'],
        sell_through_from: '2024-10-07',
        sell_through_to: '2025-01-05',
        sell_through_per_bucket: average,
      });
      assert.equal(res.body.meta.mode, 'partner');
      const stock = (await get('inventory?filter[item_name]=SKU-0001&filter[location_name]=Partner-Mart')).body.data;
      assert.equal(stock.length, 1);
      assert.ok(stock[0].quantity > 0, 'the demo partner holds stock');
      assert.deepEqual(
        res.body.meta.on_hand,
        { quantity: stock[0].quantity, inventory_date: '2025-01-05' },
        "netting starts from the partner's on-hand",
      );
    });

    it('plans a non-partner item-location from its History, and from its Forecast once it has one', async () => {
      const history = await generate({ mode: 'partner', item_name: 'SKU-0029', location_name: 'DC-West' });
      assert.equal(history.status, 200, history.text);
      assert.match(history.body.message, /^Supply plan generated for SKU-0029 at DC-West: 52 week buckets of view Default, partner mode/);
      assert.equal(history.body.meta.mode, 'partner');
      assert.deepEqual(history.body.meta.demand, {
        source: 'history',
        basis: 'forecast_else_history',
        customer_groups: ['Retail', 'Online', 'Wholesale'],
        share: 0.5,
        forecast_buckets: 0,
        history_buckets: 52,
        mixed_buckets: 0,
      });
      const standard = await generate({ mode: 'standard', item_name: 'SKU-0029', location_name: 'DC-West' });
      assert.deepEqual(
        history.body.data.map((r: any) => [r.gross_requirements, r.planned_receipts]),
        standard.body.data.map((r: any) => [r.gross_requirements, r.planned_receipts]),
        'without sell-through, partner mode plans the same demand as standard',
      );

      // A Forecast for one customer group in the first two weeks: those weeks mix Forecast and History.
      const load = await api(sys, '/demo/api/v1/workflows/sync-sales', {
        method: 'POST',
        token,
        body: {
          mode: 'upsert',
          options: { allow_record_creation: true, allow_record_update: true, continue_on_error: false },
          data: ['2025-01-06', '2025-01-13'].map((sell_date) => ({
            sale_type_name: 'Forecast',
            item_name: 'SKU-0029',
            customer_group_name: 'Retail',
            sell_date,
            timing_interval: 'week',
            quantity: 400,
            uom: 'ea',
          })),
        },
      });
      assert.equal(load.status, 202, load.text);
      assert.equal((await waitForJob(sys, 'demo', token, load.body.data[0].job_id)).status, 'succeeded');
      const forecast = await generate({ mode: 'partner', item_location_id: history.body.data[0].item_location_id });
      assert.equal(forecast.status, 200, forecast.text);
      assert.deepEqual(
        [
          forecast.body.meta.demand.source,
          forecast.body.meta.demand.forecast_buckets,
          forecast.body.meta.demand.mixed_buckets,
          forecast.body.meta.demand.history_buckets,
        ],
        ['forecast', 0, 2, 50],
      );
    });

    it('plans the whole Default view to succeeded: every item-location, partners from sell-through', async () => {
      const res = await generate({ mode: 'partner', view_name: 'Default' });
      assert.equal(res.status, 202, res.text);
      assert.deepEqual(res.body.data[0].progress, { processed: 0, total: 108 }, 'every item-location of the view');
      const done = await waitForJob(sys, 'demo', token, res.body.data[0].job_id, 90_000);
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      assert.deepEqual(done.result, { created: 108, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      assert.match(
        done.message,
        /^Planned 108 of 108 item-locations of view Default \(partner mode, unconstrained supply, plan run \d+\)\.$/,
      );

      const rows = await walk('supply-plans?filter[view_name]=Default');
      assert.equal(rows.length, 108 * 52);
      const runIds = new Set(rows.map((r) => r.plan_run_id));
      assert.equal(runIds.size, 1, 'every row from the job run');
      // The partner's item-locations follow its sell-through; the others last year's same week.
      const partner = rows.filter((r) => r.item_name === 'SKU-0002' && r.location_name === 'Partner-Mart');
      const average = await sellThroughAverage('SKU-0002');
      assert.ok(partner.length === 52 && partner.every((r) => Math.abs(r.gross_requirements - average) < 1e-9));
      const single = await generate({ mode: 'partner', item_name: 'SKU-0040', location_name: 'DC-East' });
      const stored = rows
        .filter((r) => r.item_name === 'SKU-0040' && r.location_name === 'DC-East')
        .sort((a, b) => a.period_start.localeCompare(b.period_start));
      assert.deepEqual(
        stored.map((r) => r.gross_requirements),
        single.body.data.map((r: any) => r.gross_requirements),
      );
    });

    describe('on the same partner item-location, partner against standard', () => {
      // SKU-0003 at Partner-Mart: its sell-through is replaced by known figures, and we also hold a Forecast for it.
      const weeks = (start: string, count: number) =>
        Array.from({ length: count }, (_, i) => new Date(Date.parse(`${start}T00:00:00Z`) + i * 7 * 86_400_000).toISOString().slice(0, 10));
      const sellThrough = weeks('2024-10-07', 13).map((d, i) => [d, 10 + i] as const); // 10..22, average 16
      const lastYear = weeks('2024-01-08', 8).map((d, i) => [d, 100 + i] as const);
      const forecast = weeks('2025-01-06', 4).map((d, i) => [d, 50 + 5 * i] as const);

      before(async () => {
        const row = (sale_type_name: string, [sell_date, quantity]: readonly [string, number]) => ({
          sale_type_name,
          item_name: 'SKU-0003',
          customer_group_name: 'Partner-Mart',
          sell_date,
          timing_interval: 'week',
          quantity,
          uom: 'kg',
        });
        const load = await api(sys, '/demo/api/v1/workflows/sync-sales', {
          method: 'POST',
          token,
          body: {
            mode: 'upsert',
            options: { allow_record_creation: true, allow_record_update: true, continue_on_error: false },
            data: [
              ...sellThrough.map((p) => row('History', p)),
              ...lastYear.map((p) => row('History', p)),
              ...forecast.map((p) => row('Forecast', p)),
            ],
          },
        });
        assert.equal(load.status, 202, load.text);
        assert.equal((await waitForJob(sys, 'demo', token, load.body.data[0].job_id)).status, 'succeeded');
      });

      it('plans the partner from its average sell-through, where standard plans the same data from forecast, then last year', async () => {
        const partner = await generate({ mode: 'partner', item_name: 'SKU-0003', location_name: 'Partner-Mart' });
        assert.equal(partner.status, 200, partner.text);
        assert.ok(
          partner.body.data.every((r: any) => Math.abs(r.gross_requirements - 16) < 1e-9),
          'the 13-week average, every week',
        );
        assert.deepEqual(partner.body.meta.demand, {
          source: 'sell_through',
          basis: 'sell_through_average',
          customer_groups: ['Partner-Mart'],
          sell_through_from: '2024-10-07',
          sell_through_to: '2025-01-05',
          sell_through_per_bucket: 16,
        });
        assert.equal(partner.body.meta.mode, 'partner');
        const stock = (await get('inventory?filter[item_name]=SKU-0003&filter[location_name]=Partner-Mart')).body.data[0].quantity;
        assert.equal(partner.body.meta.on_hand.quantity, stock, "the partner's on-hand");

        const standard = await generate({ mode: 'standard', item_name: 'SKU-0003', location_name: 'Partner-Mart' });
        assert.equal(standard.status, 200, standard.text);
        const gross = standard.body.data.map((r: any) => r.gross_requirements);
        assert.deepEqual(gross.slice(0, 4), [50, 55, 60, 65], 'our Forecast first');
        assert.deepEqual(gross.slice(4, 8), [104, 105, 106, 107], 'then the same weeks a year earlier');
        const demo = await get(
          'sales-data?filter[item_name]=SKU-0003&filter[customer_group_name]=Partner-Mart&filter[sale_type_name]=History&filter[sell_date_from]=2024-03-04&filter[sell_date_to]=2024-03-10',
        );
        assert.deepEqual(gross[8], demo.body.data[0].quantity, "the demo's History beyond the loaded weeks");
        assert.deepEqual(standard.body.meta.demand, {
          source: 'forecast',
          basis: 'forecast_else_history',
          customer_groups: ['Partner-Mart'],
          share: 1,
          forecast_buckets: 4,
          history_buckets: 48,
          mixed_buckets: 0,
        });
        const receipts = (res: typeof standard) => res.body.data.map((r: any) => r.planned_receipts);
        assert.notDeepEqual(receipts(partner), receipts(standard));

        const auto = await generate({ mode: 'auto', item_location_id: standard.body.data[0].item_location_id });
        assert.equal(auto.body.meta.mode, 'partner', 'auto plans a partner item-location as a partner');
        const rows = await walk('supply-plans?filter[item_name]=SKU-0003&filter[location_name]=Partner-Mart');
        assert.ok(rows.length === 52 && rows.every((r) => r.plan_run_id === auto.body.meta.plan_run_id), 'the last plan is the stored one');
      });

      it("takes the partner's customer group out of what the other locations share", async () => {
        const dc = await generate({ mode: 'standard', item_name: 'SKU-0003', location_name: 'DC-East' });
        assert.deepEqual([dc.body.meta.demand.customer_groups, dc.body.meta.demand.share], [['Retail', 'Online', 'Wholesale'], 0.5]);
      });
    });
  });
});
