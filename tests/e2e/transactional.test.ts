import assert from 'node:assert/strict';
import type { CallOverrides } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { api, startSystem, type TestSystem } from '../support/system';

/** A /sales-data record as the API shows it. */
interface Sale {
  id: number;
  item_customer_group_id: number;
  item_id: number;
  item_name: string;
  customer_group_id: number;
  customer_group_name: string;
  sale_type_name: string;
  timing_interval: string;
  sell_date: string;
  quantity: number;
  uom: string;
  uom_abbr: string;
  created_at: string;
  updated_at: string;
  [included: string]: unknown;
}

interface Pagination {
  result_count: number;
  per_page: number;
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
}

const MICROSECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const as = (tenant: string): CallOverrides => ({ context: { requestId: 'transactional-e2e', tenant } });

/** The API's sale record from the internal one, written from the API docs, not from the presenter. */
const apiSale = (r: pb.SalesRecord): Sale => ({
  id: r.id,
  item_customer_group_id: r.item_customer_group_id,
  item_id: r.item_id,
  item_name: r.item_name,
  customer_group_id: r.customer_group_id,
  customer_group_name: r.customer_group_name,
  sale_type_name: r.sale_type_name,
  timing_interval: r.timing_interval_span,
  sell_date: r.sell_date,
  quantity: r.quantity,
  uom: r.uom_name,
  uom_abbr: r.uom_abbr,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

type Key = 'id' | 'sell_date' | 'item_name' | 'customer_group_name' | 'quantity' | 'created_at' | 'updated_at';

/**
 * The order a cursor read promises: the keys in turn (names ignoring case), then id
 * in the direction of the last key.
 */
function sortedLike(records: Sale[], sort: string): Sale[] {
  const keys = sort ? sort.split(',').map((k) => ({ key: k.replace(/^-/, '') as Key, dir: k.startsWith('-') ? -1 : 1 })) : [];
  if (!keys.some((k) => k.key === 'id')) keys.push({ key: 'id', dir: keys.length > 0 ? keys[keys.length - 1]!.dir : 1 });
  const value = (r: Sale, key: Key) => (typeof r[key] === 'string' ? (r[key] as string).toLowerCase() : r[key]) as string | number;
  return [...records].sort((a, b) => {
    for (const { key, dir } of keys) {
      const x = value(a, key);
      const y = value(b, key);
      if (x !== y) return (x < y ? -1 : 1) * dir;
    }
    return 0;
  });
}

describe('transactional cursor reads: /sales-data, /inventory, /supply-plans, /financial-plans', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let demo: string;
  let acme: string;
  let nodemand: string;
  /** Every demo sales record, read through the service's internal id walk. */
  let everything: Sale[];

  const get = (path: string, token = demo, tenant = 'demo') => api(sys, `/${tenant}/api/v1/${path}`, { token });

  async function internalWalk(tenant: string): Promise<Sale[]> {
    const all: Sale[] = [];
    for (let after = 0; ;) {
      const res = await sys.clients.transactional.listSales({ after_id: after, limit: 5000, filter: undefined }, as(tenant));
      all.push(...res.records.map(apiSale));
      if (!res.has_more) return all;
      after = res.records[res.records.length - 1]!.id;
    }
  }

  /** Walks by next_cursor to the end, then back by prev_cursor to the start, checking meta on the way. */
  async function walk(path: string, query: string, perPage: number, token = demo, tenant = 'demo') {
    const base = `${path}?${query}${query ? '&' : ''}per_page=${perPage}`;
    const forward: Sale[][] = [];
    let url = base;
    for (;;) {
      const res = await get(url, token, tenant);
      assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 300)}`);
      const p = res.body.meta.pagination as Pagination;
      assert.deepEqual(Object.keys(p).sort(), ['has_more', 'next_cursor', 'per_page', 'prev_cursor', 'result_count']);
      assert.equal(res.body.links, `/${tenant}/api/v1/${url}`);
      assert.equal(p.result_count, res.body.data.length);
      assert.equal(p.per_page, perPage);
      if (forward.length === 0) assert.equal(p.prev_cursor, null, 'no prev_cursor on the first page');
      else assert.equal(typeof p.prev_cursor, 'string');
      forward.push(res.body.data);
      if (!p.has_more) {
        assert.equal(p.next_cursor, null);
        break;
      }
      assert.equal(res.body.data.length, perPage, 'every page before the last is full');
      url = `${base}&cursor=${encodeURIComponent(p.next_cursor!)}`;
    }
    // Back from the last page: its prev_cursor, then each page's, until the first page says null.
    const backward: Sale[][] = [forward[forward.length - 1]!];
    let prev = (await get(url, token, tenant)).body.meta.pagination.prev_cursor as string | null;
    while (prev) {
      const res = await get(`${base}&cursor=${encodeURIComponent(prev)}`, token, tenant);
      assert.equal(res.status, 200, res.text.slice(0, 300));
      backward.unshift(res.body.data);
      assert.equal(res.body.meta.pagination.has_more, true, 'walking back, the pages already seen lie ahead');
      prev = res.body.meta.pagination.prev_cursor;
    }
    return { forward, backward };
  }

  before(async () => {
    sys = await startSystem();
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 1_000_000, monthly_credits: 100_000_000 });
    demo = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    acme = await sys.tokenFor('acme', 'admin@acme.test', ['public_api.read']);
    nodemand = await sys.tokenFor('demo', 'nodemand@demo.test', ['public_api.read']);
    everything = await internalWalk('demo');
  });
  after(() => sys?.stop());

  it('holds two years of weekly History per demo item and customer group, with zeros, fractions and microsecond timestamps', () => {
    const series = new Map<number, Sale[]>();
    for (const s of everything) series.set(s.item_customer_group_id, [...(series.get(s.item_customer_group_id) ?? []), s]);
    assert.ok(series.size >= 40 * 3, `${series.size} item x customer group series`);
    for (const records of series.values()) {
      assert.equal(records.length, 104);
      const weeks = records.map((r) => r.sell_date).sort();
      assert.equal((Date.parse(weeks[103]!) - Date.parse(weeks[0]!)) / 86_400_000, 103 * 7);
    }
    assert.ok(everything.every((s) => s.sale_type_name === 'History' && s.timing_interval === 'week' && s.quantity >= 0));
    assert.ok(everything.every((s) => MICROSECONDS.test(s.created_at) && MICROSECONDS.test(s.updated_at) && Number.isInteger(s.id)));
    const zeroShare = (records: Sale[]) => records.filter((r) => r.quantity === 0).length / records.length;
    assert.ok(
      [...series.values()].some((records) => zeroShare(records) > 0.5),
      'some series are intermittent',
    );
    assert.ok(
      everything.some((s) => !Number.isInteger(s.quantity)),
      'fractional quantities occur',
    );
  });

  it("gives the partner location its sell-through (its own customer group's History, for the items it stocks) and its on-hand", async () => {
    const stocked = (await get('item-locations?filter[location_name]=Partner-Mart&per_page=100')).body.data as Array<{
      item_name: string;
      partner: boolean;
    }>;
    assert.equal(stocked.length, 12);
    assert.ok(stocked.every((il) => il.partner));
    const sellThrough = everything.filter((s) => s.customer_group_name === 'Partner-Mart');
    assert.deepEqual(
      [...new Set(sellThrough.map((s) => s.item_name))].sort(),
      stocked.map((il) => il.item_name).sort(),
      'only what the partner stocks',
    );
    assert.equal(sellThrough.length, 12 * 104);
    assert.ok(sellThrough.some((s) => s.quantity > 0));
    const stock = (await get('inventory?filter[location_name]=Partner-Mart&per_page=100')).body.data as Array<{
      item_name: string;
      quantity: number;
      inventory_date: string;
    }>;
    assert.deepEqual(stock.map((r) => r.item_name).sort(), stocked.map((il) => il.item_name).sort());
    assert.ok(stock.every((r) => r.quantity > 0 && r.inventory_date === '2025-01-05'));
  });

  const walks: Array<[string, string, number, (s: Sale) => boolean]> = [
    ['id order, the default', '', 1000, () => true],
    ['-quantity (ties on id, descending)', 'sort=-quantity', 1000, () => true],
    [
      'item_name,-sell_date over two customer groups named in another case',
      'sort=item_name,-sell_date&filter[customer_group_name]=retail,ONLINE',
      700,
      (s) => ['retail', 'online'].includes(s.customer_group_name.toLowerCase()),
    ],
    [
      'a sell date range by sell_date',
      'filter[sell_date_from]=2024-03-01&filter[sell_date_to]=2024-06-30&sort=sell_date',
      250,
      (s) => s.sell_date >= '2024-03-01' && s.sell_date <= '2024-06-30',
    ],
    [
      'two items by -sell_date',
      'filter[item_name]=SKU-0003,sku-0010&sort=-sell_date',
      50,
      (s) => ['SKU-0003', 'SKU-0010'].includes(s.item_name),
    ],
    [
      'an order no index serves: customer_group_name,quantity within five items',
      'filter[item_name]=SKU-0001,SKU-0002,SKU-0003,SKU-0004,SKU-0005&sort=customer_group_name,quantity',
      97,
      (s) => /^SKU-000[1-5]$/.test(s.item_name),
    ],
    [
      '-created_at (all of a load share it) with sale type and interval filters',
      'filter[sale_type_name]=history&filter[timing_interval]=week&sort=-created_at',
      2000,
      () => true,
    ],
    [
      'customer_group_name,-updated_at in a date range',
      'filter[sell_date_from]=2024-12-01&sort=customer_group_name,-updated_at',
      33,
      (s) => s.sell_date >= '2024-12-01',
    ],
  ];

  for (const [name, query, perPage, keep] of walks) {
    it(`walks ${name} by next_cursor without missing or repeating a record, and back by prev_cursor`, async () => {
      const sort = new URLSearchParams(query).get('sort') ?? '';
      const expected = sortedLike(everything.filter(keep), sort);
      assert.ok(expected.length > perPage, 'more than one page');
      const { forward, backward } = await walk('sales-data', query, perPage);
      const seen = forward.flat();
      assert.equal(new Set(seen.map((s) => s.id)).size, seen.length, 'no record twice');
      assert.deepEqual(seen, expected);
      assert.deepEqual(backward, forward, 'prev_cursor walks back over the same pages');
    });
  }

  it('includes item, customer group and hierarchy values from reference data', async () => {
    const res = await get(
      'sales-data?filter[item_name]=SKU-0002&filter[customer_group_name]=Online&per_page=3&include=item,customer_group,hierarchy',
    );
    assert.equal(res.status, 200, res.text);
    const item = (await get('items?filter[name]=SKU-0002')).body.data[0];
    const group = (await get('customer-groups?filter[name]=Online')).body.data[0];
    for (const sale of res.body.data as Sale[]) {
      assert.deepEqual(sale.item, { id: item.id, name: 'SKU-0002' });
      assert.deepEqual(sale.customer_group, { id: group.id, name: 'Online' });
      assert.deepEqual(sale.hierarchy, { item: item.hierarchy, customer_group: group.hierarchy });
    }
    const plain = (await get('sales-data?per_page=1')).body.data[0];
    assert.deepEqual(
      Object.keys(plain),
      Object.keys(apiSale({ item_hierarchy: [], customer_group_hierarchy: [] } as unknown as pb.SalesRecord)),
    );
  });

  it('refuses a tampered cursor, and a cursor of another filter, sort, endpoint or tenant, with 422 on cursor', async () => {
    const first = await get('sales-data?per_page=5&filter[item_name]=SKU-0001&sort=sell_date');
    const cursor = first.body.meta.pagination.next_cursor as string;
    const [payload, mac] = cursor.split('.');
    const tampered = [
      `${payload!.slice(0, -2)}${payload!.endsWith('A') ? 'B' : 'A'}${payload!.slice(-1)}.${mac}`,
      `${payload}.${mac!.slice(0, -1)}${mac!.endsWith('A') ? 'B' : 'A'}`,
      `${Buffer.from(JSON.stringify({ d: 'n', p: '[{"$gt":""},1]' })).toString('base64url')}.${mac}`,
      'not-a-cursor',
    ];
    const foreign: Array<[string, string, string]> = [
      ['demo', demo, 'sales-data?per_page=5&filter[item_name]=SKU-0002&sort=sell_date'],
      ['demo', demo, 'sales-data?per_page=5&filter[item_name]=SKU-0001&sort=-sell_date'],
      ['demo', demo, 'sales-data?per_page=5&filter[item_name]=SKU-0001'],
      ['demo', demo, 'inventory?per_page=5'],
      ['acme', acme, 'sales-data?per_page=5&filter[item_name]=SKU-0001&sort=sell_date'],
    ];
    const cases = [
      ...tampered.map(
        (c) => ['demo', demo, `sales-data?per_page=5&filter[item_name]=SKU-0001&sort=sell_date&cursor=${encodeURIComponent(c)}`] as const,
      ),
      ...foreign.map(([tenant, token, path]) => [tenant, token, `${path}&cursor=${encodeURIComponent(cursor)}`] as const),
    ];
    for (const [tenant, token, path] of cases) {
      const res = await get(path, token, tenant);
      assert.equal(res.status, 422, `${tenant} ${path}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body.errors), ['cursor'], res.text);
    }
    // The same query written differently is the same query: names ignore case and order, per_page may change.
    const same = await get(`sales-data?per_page=7&filter[item_name]=sku-0001&sort=sell_date&cursor=${encodeURIComponent(cursor)}`);
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.data[0].sell_date, '2023-01-16');
  });

  it('answers unknown filter, sort and include names with 400 invalid-query naming the allowed ones', async () => {
    const cases: Array<[string, string[]]> = [
      ['sales-data?filter[colour]=red', ['filter[item_name]', 'filter[sell_date_to]']],
      ['sales-data?filter[id]=1', ['filter[customer_group_name]']],
      ['sales-data?sort=-price', ['sell_date', 'updated_at']],
      ['sales-data?sort=sell_date,$where', ['quantity']],
      ['sales-data?include=location', ['item', 'customer_group', 'hierarchy']],
      ['inventory?filter[sell_date_from]=2024-01-01', ['filter[location_name]', 'filter[inventory_date_from]']],
      ['inventory?include=item', []],
      ['supply-plans?sort=quantity', ['period_start', 'location_name']],
      ['financial-plans?filter[customer_group_name]=Retail', ['filter[view_name]', 'filter[period_start_to]']],
    ];
    for (const [path, named] of cases) {
      const res = await get(path);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(res.body.type, '/problems/invalid-query');
      assert.equal(res.body.instance, `/demo/api/v1/${path.split('?')[0]}`);
      for (const name of named) assert.ok(res.body.detail.includes(name), `${path}: ${res.body.detail} names ${name}`);
    }
  });

  it('validates values: per_page bounds, dates, ranges, and never passes an operator on', async () => {
    const cases: Array<[string, string]> = [
      ['sales-data?per_page=0', 'per_page'],
      ['sales-data?per_page=5001', 'per_page'],
      ['sales-data?per_page=ten', 'per_page'],
      ['inventory?per_page=-1', 'per_page'],
      ['sales-data?filter[sell_date_from]=2024-02-30', 'filter.sell_date_from'],
      ['sales-data?filter[sell_date_to]=yesterday', 'filter.sell_date_to'],
      ['sales-data?filter[sell_date_from]=2024-05-01&filter[sell_date_to]=2024-04-30', 'filter.sell_date_to'],
      ['sales-data?filter[item_name][$ne]=SKU-0001', 'filter.item_name'],
      ['sales-data?filter[quantity][$gt]=1', 'filter.quantity'],
      ['sales-data?filter[item_name][]=SKU-0001', 'filter.item_name'],
      ['sales-data?sort[$natural]=1', 'sort'],
      ['supply-plans?filter[period_start_from]=01/02/2025', 'filter.period_start_from'],
    ];
    for (const [path, field] of cases) {
      const res = await get(path);
      if (field === 'filter.quantity') {
        assert.equal(res.status, 400, `${path}: an unknown name is refused before its value is looked at`);
        continue;
      }
      assert.equal(res.status, 422, `${path}: ${res.text}`);
      assert.ok(Array.isArray(res.body.errors[field]), `${path}: errors.${field} in ${res.text}`);
    }
    const full = await get('sales-data?per_page=5000');
    assert.equal(full.status, 200);
    assert.equal(full.body.data.length, 5000);
    assert.equal((await get('sales-data')).body.meta.pagination.per_page, 100);
  });

  it('keeps tenants apart', async () => {
    const acmeAll = await internalWalk('acme');
    assert.ok(acmeAll.length > 0);
    const { forward } = await walk('sales-data', 'sort=-sell_date', 5000, acme, 'acme');
    assert.deepEqual(
      forward
        .flat()
        .map((s) => s.id)
        .sort((a, b) => a - b),
      acmeAll.map((s) => s.id),
    );
    const demoIds = new Set(everything.map((s) => s.id));
    assert.ok(acmeAll.every((s) => !demoIds.has(s.id)));
    assert.equal((await get('sales-data', acme, 'demo')).status, 401, "another tenant's token is unauthenticated");
  });

  it('gates each read on its module: no demand access, no sales-data', async () => {
    const refused = await get('sales-data', nodemand);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.type, '/problems/insufficient-permission');
    assert.equal((await get('inventory', nodemand)).status, 200);
    const writeOnly = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.write']);
    assert.equal((await get('sales-data', writeOnly)).body.type, '/problems/insufficient-scope');
  });

  it('serves inventory on hand for every demo item-location, filtered and walked', async () => {
    const placements: Array<{ item_name: string; location_name: string }> = [];
    for (let page = 1; ; page++) {
      const res = await get(`item-locations?per_page=100&page=${page}`);
      placements.push(...res.body.data);
      if (page >= res.body.meta.pagination.last_page) break;
    }
    const { forward, backward } = await walk('inventory', 'sort=location_name,item_name', 13);
    const stock = forward.flat() as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(backward, forward);
    assert.deepEqual(
      stock.map((s) => `${s.location_name}/${s.item_name}`),
      placements.map((p) => `${p.location_name}/${p.item_name}`).sort(),
    );
    assert.ok(
      stock.every((s) => s.bin_name === null && s.lot_name === null && typeof s.quantity === 'number' && (s.quantity as number) >= 0),
    );
    const east = await get('inventory?filter[location_name]=dc-east&filter[inventory_date_from]=2025-01-01&per_page=5000');
    assert.equal(east.body.data.length, placements.filter((p) => p.location_name === 'DC-East').length);
    assert.equal((await get('inventory?filter[inventory_date_to]=2024-12-31')).body.data.length, 0);
  });

  it('serves supply and financial plan rows written by ReplaceSupplyPlan / ReplaceFinancialPlan', async () => {
    const target = (n: number, location: string): pb.PlanTarget => ({
      item_location_id: 1000 + 10 * n + (location === 'DC-East' ? 1 : 2),
      item_id: n,
      item_name: `SKU-000${n}`,
      location_id: location === 'DC-East' ? 1 : 2,
      location_name: location,
      view_id: 1,
      view_name: 'Default',
      plan_run_id: 7,
    });
    const weeks = (count: number) =>
      Array.from({ length: count }, (_, i) => new Date(Date.UTC(2025, 0, 6 + 7 * i)).toISOString().slice(0, 10));
    const supply = (count: number) =>
      weeks(count).map((period_start, i) => ({
        period_start,
        gross_requirements: 10 + i,
        scheduled_receipts: 0,
        projected_available: 50 - i,
        net_requirements: 0,
        planned_receipts: i % 3 === 0 ? 30 : 0,
        planned_releases: 0,
      }));
    for (const [n, location] of [
      [1, 'DC-East'],
      [2, 'DC-East'],
      [1, 'DC-West'],
    ] as const) {
      await sys.clients.transactional.replaceSupplyPlan({ target: target(n, location), buckets: supply(12) }, as('demo'));
    }
    // A new run with a shorter horizon: its periods replace, the rest go.
    const replaced = await sys.clients.transactional.replaceSupplyPlan(
      { target: { ...target(2, 'DC-East'), plan_run_id: 8 }, buckets: supply(4) },
      as('demo'),
    );
    assert.deepEqual(replaced, { written: 4, deleted: 8 });
    await sys.clients.transactional.replaceFinancialPlan(
      {
        target: target(1, 'DC-East'),
        buckets: weeks(3).map((period_start) => ({
          period_start,
          satisfied_demand: 10,
          revenue: 100,
          cost_of_goods: 60,
          gross_margin: 40,
          purchase_spend: 30,
          inventory_value: 200,
        })),
      },
      as('demo'),
    );

    const { forward, backward } = await walk('supply-plans', 'filter[view_name]=default&sort=period_start', 5);
    const rows = forward.flat() as unknown as Array<Record<string, any>>;
    assert.deepEqual(backward, forward);
    assert.equal(rows.length, 12 + 12 + 4);
    assert.deepEqual(
      rows.map((r) => r.period_start),
      [...rows.map((r) => r.period_start)].sort(),
    );
    assert.deepEqual(Object.keys(rows[0]!), [
      'id',
      'plan_run_id',
      'view_id',
      'view_name',
      'item_location_id',
      'item_id',
      'item_name',
      'location_id',
      'location_name',
      'period_start',
      'gross_requirements',
      'scheduled_receipts',
      'projected_available',
      'net_requirements',
      'planned_receipts',
      'planned_releases',
      'created_at',
      'updated_at',
    ]);
    const east2 = await get('supply-plans?filter[item_name]=SKU-0002&filter[location_name]=DC-East&per_page=100');
    assert.deepEqual(
      east2.body.data.map((r: any) => r.plan_run_id),
      [8, 8, 8, 8],
    );
    const ranged = await get('supply-plans?filter[period_start_from]=2025-01-13&filter[period_start_to]=2025-01-20&per_page=100');
    assert.equal(ranged.body.data.length, 6);
    const money = await get('financial-plans?sort=-period_start');
    assert.deepEqual(
      money.body.data.map((r: any) => [r.period_start, r.revenue, r.gross_margin]),
      [
        ['2025-01-20', 100, 40],
        ['2025-01-13', 100, 40],
        ['2025-01-06', 100, 40],
      ],
    );
    assert.equal((await get('financial-plans', nodemand)).status, 200);
  });
});
