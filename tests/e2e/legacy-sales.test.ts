import assert from 'node:assert/strict';
import type { CallOverrides } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { api, startSystem, type TestSystem } from '../support/system';

/** The sales record of the legacy read, fields in the order legacy clients know. */
const LEGACY_FIELDS = [
  'id',
  'sell_date',
  'quantity',
  'created_at',
  'updated_at',
  'item_name',
  'customer_group_name',
  'timing_interval_span',
  'sale_type_name',
  'uom_abbr',
];
const WRAPPER_FIELDS = [
  'success_message',
  'sales',
  'total',
  'from',
  'to',
  'per_page',
  'previous_data_count',
  'data_count_remaining',
  'current_index',
  'next_index',
  'success_count',
];

const as = (tenant: string): CallOverrides => ({ context: { requestId: 'legacy-sales-e2e', tenant } });
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe('legacy GET /sales and GET /supply-plan/get/process', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let demo: string;
  let acme: string;
  let history: pb.SalesRecord[];

  const get = (path: string, token = demo, tenant = 'demo') => api(sys, `/${tenant}/api/v1/${path}`, { token });

  before(async () => {
    sys = await startSystem();
    demo = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    acme = await sys.tokenFor('acme', 'admin@acme.test', ['public_api.read']);
    history = [];
    for (let after = 0; ;) {
      const res = await sys.clients.transactional.listSales({ after_id: after, limit: 10_000, filter: undefined }, as('demo'));
      history.push(...res.records);
      if (!res.has_more) break;
      after = res.records[res.records.length - 1]!.id;
    }
  });
  after(() => sys?.stop());

  /** Walks GET /sales by current_index/next_index, checking the wrapper's counters on every batch. */
  async function walk(query: string, batch: number | undefined, expected: pb.SalesRecord[], token = demo, tenant = 'demo') {
    const seen: Array<Record<string, unknown>> = [];
    let current: number | null = 0;
    let batches = 0;
    while (current !== null) {
      const paging = `${batch ? `&pagination_count=${batch}` : ''}${current > 0 ? `&current_index=${current}` : ''}`;
      const res = await get(`sales?${query}${paging}`, token, tenant);
      assert.equal(res.status, 200, res.text.slice(0, 300));
      const body = res.body;
      assert.deepEqual(Object.keys(body), WRAPPER_FIELDS);
      const before = expected.filter((r) => r.id <= current!).length;
      const count = body.sales.length;
      assert.equal(body.total, expected.length);
      assert.equal(body.per_page, batch ?? 1000);
      assert.equal(body.current_index, current);
      assert.equal(body.previous_data_count, before);
      assert.equal(body.success_count, count);
      assert.equal(body.from, count > 0 ? before + 1 : 0);
      assert.equal(body.to, count > 0 ? before + count : 0);
      assert.equal(body.previous_data_count + body.success_count + body.data_count_remaining, body.total, 'the counters add up');
      assert.equal(typeof body.success_message, 'string');
      const remaining = expected.length - before - count;
      assert.equal(body.next_index, remaining > 0 ? body.sales[count - 1].id : null);
      if (remaining > 0) assert.equal(count, batch ?? 1000, 'a batch before the last is full');
      seen.push(...body.sales);
      current = body.next_index;
      batches++;
    }
    return { seen, batches };
  }

  const inWindow = (start: string, days: number) => (r: pb.SalesRecord) =>
    r.sale_type_name === 'History' && r.sell_date >= start && r.sell_date < addDays(start, days);

  it('walks two years of History, 1000 per batch, returning every record once in id order with counters that add up', async () => {
    const expected = history.filter(inWindow('2023-01-09', 728));
    assert.ok(expected.length > 10_000);
    const { seen, batches } = await walk('sale_type_name=History&start_date=2023-01-09&duration=728', undefined, expected);
    assert.equal(batches, Math.ceil(expected.length / 1000));
    assert.deepEqual(
      seen,
      expected.map((r) => ({
        id: r.id,
        sell_date: r.sell_date,
        quantity: r.quantity,
        created_at: r.created_at,
        updated_at: r.updated_at,
        item_name: r.item_name,
        customer_group_name: r.customer_group_name,
        timing_interval_span: r.timing_interval_span,
        sale_type_name: r.sale_type_name,
        uom_abbr: r.uom_abbr,
      })),
    );
    assert.deepEqual(Object.keys(seen[0]!), LEGACY_FIELDS);
  });

  it('counts duration in days from start_date: sell_date in [start, start + duration)', async () => {
    for (const [start, days] of [
      ['2024-01-01', 7],
      ['2024-01-01', 8],
      ['2023-12-30', 10],
      ['2030-01-01', 30],
    ] as const) {
      const expected = history.filter(inWindow(start, days));
      const { seen } = await walk(`sale_type_name=history&start_date=${start}&duration=${days}`, 50, expected);
      assert.deepEqual(
        seen.map((r) => r.id),
        expected.map((r) => r.id),
        `${start} + ${days} days`,
      );
    }
    const window = history.filter(inWindow('2024-01-01', 7));
    const pastTheEnd = await get(
      `sales?sale_type_name=History&start_date=2024-01-01&duration=7&current_index=${window[window.length - 1]!.id}`,
    );
    assert.deepEqual(
      [
        pastTheEnd.body.total,
        pastTheEnd.body.previous_data_count,
        pastTheEnd.body.success_count,
        pastTheEnd.body.data_count_remaining,
        pastTheEnd.body.next_index,
      ],
      [window.length, window.length, 0, 0, null],
      'a batch past the end is empty and still adds up',
    );
    const forecast = await get('sales?sale_type_name=Forecast&start_date=2024-01-01&duration=365');
    assert.equal(forecast.status, 200, 'a sale type with no records is an empty answer');
    assert.deepEqual(
      [forecast.body.total, forecast.body.sales, forecast.body.next_index, forecast.body.data_count_remaining],
      [0, [], null, 0],
    );
  });

  it('adds uom and one field per hierarchy level, named as the tenant configured its levels', async () => {
    const ref = sys.clients.reference;
    const levels = (
      await ref.listHierarchyLevels(
        { page: { page: 1, per_page: 100, total: 0 }, filter_name: '', filter_item_name: '', filter_location_name: '' },
        as('acme'),
      )
    ).records;
    const rename = async (from: string, to: string) =>
      ref.updateHierarchyLevel({ id: levels.find((l) => l.name === from)!.id, patch: { name: to } }, as('acme'));
    await rename('Category', 'Product Family');
    await rename('Region', 'Sales Region');

    const res = await get(
      'sales?sale_type_name=History&start_date=2024-06-03&duration=7&include_flattened_hierarchy=1&pagination_count=200',
      acme,
      'acme',
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.sales.length, 156, 'a week: 48 items x 3 customer groups, and the 12 items Partner-Mart buys');
    const items = new Map<string, any>();
    for (let page = 1; ; page++) {
      const list = await get(`items?per_page=1000&page=${page}`, acme, 'acme');
      for (const item of list.body.data) items.set(item.name, item);
      if (page >= list.body.meta.pagination.last_page) break;
    }
    const groups = new Map<string, any>(((await get('customer-groups', acme, 'acme')).body.data as any[]).map((g) => [g.name, g]));
    for (const sale of res.body.sales) {
      assert.deepEqual(Object.keys(sale), [...LEGACY_FIELDS, 'uom', 'Product Family', 'Brand', 'Channel', 'Sales Region']);
      const item = items.get(sale.item_name);
      const group = groups.get(sale.customer_group_name);
      assert.equal(sale.uom, item.uom);
      assert.equal(sale['Product Family'], item.hierarchy['Product Family']);
      assert.equal(sale.Brand, item.hierarchy.Brand);
      assert.equal(sale.Channel, group.hierarchy.Channel);
      assert.equal(sale['Sales Region'], group.hierarchy['Sales Region']);
    }
    const demoSale = (
      await get('sales?sale_type_name=History&start_date=2024-06-03&duration=7&include_flattened_hierarchy=1&pagination_count=1')
    ).body.sales[0];
    assert.deepEqual(
      Object.keys(demoSale).slice(LEGACY_FIELDS.length),
      ['uom', 'Category', 'Brand', 'Channel', 'Region'],
      'demo keeps its own level names',
    );
    const plain = (
      await get('sales?sale_type_name=History&start_date=2024-06-03&duration=7&include_flattened_hierarchy=0&pagination_count=1')
    ).body.sales[0];
    assert.deepEqual(Object.keys(plain), LEGACY_FIELDS);
  });

  it('answers an unknown sale type or a missing or malformed argument with the legacy 422', async () => {
    const cases: Array<[string, string[]]> = [
      ['sales?sale_type_name=Budget&start_date=2024-01-01&duration=7', ['sale_type_name']],
      ['sales', ['sale_type_name', 'start_date', 'duration']],
      ['sales?sale_type_name=History&duration=7', ['start_date']],
      ['sales?sale_type_name=History&start_date=2024-01-01', ['duration']],
      ['sales?sale_type_name=History&start_date=2024-13-01&duration=7', ['start_date']],
      ['sales?sale_type_name=History&start_date=2024-01-01&duration=0', ['duration']],
      ['sales?sale_type_name=History&start_date=2024-01-01&duration=7&pagination_count=0', ['pagination_count']],
      ['sales?sale_type_name=History&start_date=2024-01-01&duration=7&current_index=-1', ['current_index']],
      ['sales?sale_type_name=History&start_date=2024-01-01&duration=7&include_flattened_hierarchy=yes', ['include_flattened_hierarchy']],
    ];
    for (const [path, fields] of cases) {
      const res = await get(path);
      assert.equal(res.status, 422, `${path}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.body.success, false);
      assert.equal(typeof res.body.message, 'string');
      assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), `${path}: ${res.text}`);
    }
    const unknown = await get('sales?sale_type_name=Budget&start_date=2024-01-01&duration=7');
    assert.deepEqual(unknown.body, {
      success: false,
      message: 'The selected sale type name is invalid.',
      errors: { sale_type_name: ['The selected sale type name is invalid.'] },
    });
  });

  it('needs a token of the tenant and View on demand, and spends no credits', async () => {
    const path = 'sales?sale_type_name=History&start_date=2024-01-01&duration=7';
    assert.equal((await api(sys, `/demo/api/v1/${path}`, {})).status, 401);
    assert.equal((await get(path, acme)).status, 401);
    const nodemand = await sys.tokenFor('demo', 'nodemand@demo.test', ['public_api.read']);
    // The body of a gate refusal is the gateway's one rule for every route (identity tests).
    assert.equal((await get(path, nodemand)).status, 403);
    const ok = await get(path);
    assert.equal(ok.headers.get('credits-remaining'), null);
    assert.equal(ok.headers.get('ratelimit'), null);
  });

  it('reads one item-location supply plan flat through GET /supply-plan/get/process', async () => {
    const weeks = Array.from({ length: 6 }, (_, i) => new Date(Date.UTC(2025, 0, 6 + 7 * i)).toISOString().slice(0, 10));
    for (const [view_id, view_name] of [
      [1, 'Default'],
      [2, 'Scenario B'],
    ] as const) {
      await sys.clients.transactional.replaceSupplyPlan(
        {
          target: {
            item_location_id: 5,
            item_id: 3,
            item_name: 'SKU-0003',
            location_id: 2,
            location_name: 'DC-West',
            view_id,
            view_name,
            plan_run_id: 11,
          },
          buckets: weeks.map((period_start, i) => ({
            period_start,
            gross_requirements: 20,
            scheduled_receipts: i === 0 ? 10 : 0,
            projected_available: 40 - i,
            net_requirements: i,
            planned_receipts: i > 2 ? 25 : 0,
            planned_releases: i > 0 ? 25 : 0,
          })),
        },
        as('demo'),
      );
    }
    const res = await get('supply-plan/get/process?item_name=sku-0003&location_name=DC-West&view_name=Default');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['success_message', 'supply_plans', 'total']);
    assert.equal(res.body.total, 6);
    assert.deepEqual(
      res.body.supply_plans.map((r: any) => r.period_start),
      weeks,
    );
    assert.deepEqual(Object.keys(res.body.supply_plans[0]), [
      'id',
      'view_name',
      'item_name',
      'location_name',
      'period_start',
      'gross_requirements',
      'scheduled_receipts',
      'projected_available',
      'net_requirements',
      'planned_receipts',
      'planned_releases',
      'plan_run_id',
      'created_at',
      'updated_at',
    ]);
    assert.deepEqual(res.body.supply_plans[0], {
      ...res.body.supply_plans[0],
      view_name: 'Default',
      item_name: 'SKU-0003',
      scheduled_receipts: 10,
    });
    const everyView = await get('supply-plan/get/process?item_name=SKU-0003&location_name=DC-West');
    assert.deepEqual(
      everyView.body.supply_plans.map((r: any) => r.view_name),
      [...Array(6).fill('Default'), ...Array(6).fill('Scenario B')],
    );
    const none = await get('supply-plan/get/process?item_name=SKU-0004&location_name=DC-West');
    assert.deepEqual([none.status, none.body.total, none.body.supply_plans], [200, 0, []]);
    const missing = await get('supply-plan/get/process?item_name=SKU-0003');
    assert.equal(missing.status, 422);
    assert.deepEqual([missing.body.success, Object.keys(missing.body.errors)], [false, ['location_name']]);
  });
});
