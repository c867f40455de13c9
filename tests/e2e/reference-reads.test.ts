import assert from 'node:assert/strict';
import { createSupplyClient, type paths } from '@supply/client';
import { startSystem, api, type TestSystem } from '../support/system';

/** Every offset-paginated reference list and the largest per_page it takes (1000 for items and locations, else 100). */
const LISTS = [
  ['items', 1000],
  ['uoms', 100],
  ['calendars', 100],
  ['locations', 1000],
  ['customer-groups', 100],
  ['sale-types', 100],
  ['timing-intervals', 100],
  ['item-locations', 100],
  ['views', 100],
  ['hierarchy-levels', 100],
] as const;
type List = (typeof LISTS)[number][0];
/** The documented page of a list (the typed client's answer). */
type Page<L extends List> = paths[`/{tenant}/api/v1/${L}`]['get']['responses'][200]['content']['application/json'];

describe('reference reads through the gateway', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let demo: string;
  let acme: string;

  before(async () => {
    sys = await startSystem();
  });
  // Rate limits count per token (120 a minute): each test reads with tokens of its own.
  beforeEach(async () => {
    demo = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    acme = await sys.tokenFor('acme', 'admin@acme.test', ['public_api.read']);
  });
  after(() => sys?.stop());

  /** Raw reads, for the requests the typed client would not send (malformed values, unknown names). */
  const get = (tenant: string, token: string, path: string) => api(sys, `/${tenant}/api/v1/${path}`, { token });
  const client = (token: string) => createSupplyClient({ baseUrl: sys.baseUrl, token });
  /** A page of a list through the typed client. */
  async function list<L extends List>(
    tenant: string,
    token: string,
    path: L,
    query: { page?: number; per_page?: number; filter?: Record<string, string> } = {},
  ) {
    const answer = await client(token).GET(`/{tenant}/api/v1/${path as List}`, { params: { path: { tenant }, query } });
    return { status: answer.response.status, body: answer.data as Page<L>, error: answer.error };
  }

  /** Walks a list by `page` until `current_page == last_page`, checking every page's meta. */
  async function walk<L extends List>(
    tenant: string,
    token: string,
    path: L,
    perPage: number,
  ): Promise<{ records: Array<Page<L>['data'][number]>; total: number }> {
    const records: Array<Page<L>['data'][number]> = [];
    let total = -1;
    for (let page = 1; ; page++) {
      const res = await list(tenant, token, path, { page, per_page: perPage });
      assert.equal(res.status, 200, `${path} page ${page}: ${JSON.stringify(res.error)}`);
      const body = res.body;
      const p = body.meta.pagination;
      assert.equal(body.links, `/${tenant}/api/v1/${path}?page=${page}&per_page=${perPage}`);
      assert.equal(p.current_page, page);
      assert.equal(p.per_page, perPage);
      assert.equal(p.result_count, body.data.length);
      assert.equal(p.last_page, Math.max(1, Math.ceil(p.total / perPage)));
      if (total >= 0) assert.equal(p.total, total, 'total is stable while walking');
      total = p.total;
      records.push(...(body.data as Array<Page<L>['data'][number]>));
      if (p.current_page === p.last_page) return { records, total };
      assert.equal(body.data.length, perPage, 'every page before the last is full');
    }
  }

  for (const [path] of LISTS) {
    it(`walks /${path} page by page and finds exactly total distinct records in id order`, async () => {
      const { records, total } = await walk('demo', demo, path, 2);
      assert.ok(total > 0, `${path} has demo data`);
      const ids = records.map((r) => r.id);
      assert.equal(new Set(ids).size, total);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
    });
  }

  it('serves the demo reference data (uoms, sale types, intervals, customer groups, items, locations, calendar, view)', async () => {
    const all = async <L extends List>(path: L) => (await walk('demo', demo, path, 100)).records;
    const uoms = await all('uoms');
    assert.deepEqual(
      uoms.map((u) => [u.name, u.abbreviation]),
      [
        ['Each', 'ea'],
        ['Case', 'cs'],
        ['Kilogram', 'kg'],
      ],
    );
    assert.deepEqual(
      (await all('sale-types')).map((s) => s.name),
      ['History', 'Forecast'],
    );
    assert.deepEqual(
      (await all('timing-intervals')).map((t) => t.name),
      ['day', 'week', 'month', 'year'],
    );
    const groups = await all('customer-groups');
    assert.deepEqual(
      groups.map((g) => g.name),
      ['Retail', 'Online', 'Wholesale', 'Partner-Mart'],
      "the partner location's own account last",
    );
    assert.deepEqual(Object.keys(groups[0]!.hierarchy), ['Channel', 'Region']);

    const items = (await all('items')).filter((i) => /^SKU-\d{4}$/.test(i.name));
    assert.ok(items.length >= 40);
    assert.equal(items[0]!.name, 'SKU-0001');
    for (const item of items) {
      assert.ok(item.unit_cost > 0 && item.unit_price > item.unit_cost, `${item.name} has a cost below its price`);
      assert.deepEqual(Object.keys(item.hierarchy), ['Category', 'Brand']);
      assert.ok(['Each', 'Case', 'Kilogram'].includes(item.uom));
    }
    const locations = await all('locations');
    assert.ok(locations.length >= 3);
    const partners = locations.filter((l) => l.type === 'partner').map((l) => l.name);
    assert.deepEqual(partners, ['Partner-Mart']);
    assert.ok(
      partners.every((name) => groups.some((g) => g.name === name)),
      'every partner location has its own customer group',
    );
    const calendars = await all('calendars');
    assert.equal(calendars[0]!.name, 'Weekly');
    assert.equal(calendars[0]!.bucket, 'week');

    const itemLocations = await all('item-locations');
    const rules = new Set(itemLocations.map((il) => il.lot_sizing_rule));
    assert.deepEqual([...rules].sort(), ['economic_order_quantity', 'fixed_order_quantity', 'lot_for_lot', 'period_order_quantity']);
    assert.ok(itemLocations.some((il) => il.partner));
    const view = (await all('views')).find((v) => v.name === 'Default')!;
    assert.deepEqual(
      view.item_location_ids,
      itemLocations.map((il) => il.id),
    );
    assert.equal(view.calendar_name, 'Weekly');

    const levels = await all('hierarchy-levels');
    assert.deepEqual(
      levels.map((l) => `${l.kind}:${l.name}`),
      ['item:Category', 'item:Brand', 'customer_group:Channel', 'customer_group:Region'],
    );
  });

  it("defaults to page 1 of 25 and takes each endpoint's maximum per_page", async () => {
    const first = await list('demo', demo, 'items');
    assert.equal(first.body.meta.pagination.per_page, 25);
    assert.equal(first.body.meta.pagination.current_page, 1);
    assert.equal(first.body.data.length, 25);
    for (const [path, max] of LISTS) {
      const res = await list('demo', demo, path, { per_page: max });
      assert.equal(res.status, 200, `${path} per_page=${max}`);
    }
  });

  it('answers 422 with Laravel field errors for out-of-range or malformed page and per_page', async () => {
    const cases: Array<[string, string]> = [
      ['uoms?per_page=0', 'per_page'],
      ['uoms?per_page=101', 'per_page'],
      ['items?per_page=1001', 'per_page'],
      ['locations?per_page=1001', 'per_page'],
      ['item-locations?per_page=101', 'per_page'],
      ['views?per_page=-5', 'per_page'],
      ['items?page=0', 'page'],
      ['items?page=abc', 'page'],
      ['customer-groups?per_page=ten', 'per_page'],
    ];
    for (const [path, field] of cases) {
      const res = await get('demo', demo, path);
      assert.equal(res.status, 422, path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.ok(Array.isArray(res.body.errors[field]), `${path}: errors.${field} in ${res.text}`);
      assert.equal(typeof res.body.message, 'string');
    }
    const both = await get('demo', demo, 'uoms?page=0&per_page=0');
    assert.match(both.body.message, /\(and 1 more error\)$/);
  });

  it('answers a page past the end with 200, empty data and the same totals', async () => {
    const res = await list('demo', demo, 'uoms', { page: 99, per_page: 2 });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
    assert.deepEqual(res.body.meta.pagination, { result_count: 0, per_page: 2, current_page: 99, total: 3, last_page: 2 });
  });

  it('filters by name exactly and case-insensitively, and refuses unknown filters with 400', async () => {
    const one = await list('demo', demo, 'items', { filter: { name: 'sku-0007' } });
    assert.equal(one.status, 200);
    assert.deepEqual(
      one.body.data.map((i) => i.name),
      ['SKU-0007'],
    );
    assert.equal(one.body.meta.pagination.total, 1);
    assert.equal((await list('demo', demo, 'items', { filter: { name: 'SKU-00' } })).body.data.length, 0, 'no partial matches');
    assert.equal((await list('demo', demo, 'uoms', { filter: { name: 'KILOGRAM' } })).body.data[0]!.abbreviation, 'kg');
    const atEast = await list('demo', demo, 'item-locations', { filter: { location_name: 'dc-east' }, per_page: 100 });
    assert.ok(atEast.body.data.length > 0 && atEast.body.data.every((il) => il.location_name === 'DC-East'));
    const oneItem = await list('demo', demo, 'item-locations', { filter: { item_name: 'SKU-0001', location_name: 'DC-West' } });
    assert.equal(oneItem.body.data.length, 1);

    for (const path of ['items?filter[colour]=red', 'item-locations?filter[name]=x', 'uoms?sort=name', 'items?include=uom']) {
      const res = await get('demo', demo, path);
      assert.equal(res.status, 400, path);
      assert.equal(res.body.type, '/problems/invalid-query');
    }
  });

  it('reads one record by id and answers 404 problems for unknown or malformed ids', async () => {
    const listed = (await list('demo', demo, 'items', { filter: { name: 'SKU-0003' } })).body.data[0]!;
    const one = await client(demo).GET('/{tenant}/api/v1/items/{id}', { params: { path: { tenant: 'demo', id: String(listed.id) } } });
    assert.equal(one.response.status, 200);
    assert.deepEqual(one.data!.data, [listed]);
    assert.deepEqual(one.data!.meta, {});
    for (const path of ['items/999999', 'items/abc', 'items/0', 'views/1.5', 'uoms/-1']) {
      const res = await get('demo', demo, path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.type, '/problems/not-found');
    }
  });

  it("never shows acme another tenant's records, by list or by id", async () => {
    for (const [path, max] of LISTS) {
      const demoIds = new Set((await walk('demo', demo, path, max)).records.map((r) => r.id));
      const acmeRecords = (await walk('acme', acme, path, max)).records;
      assert.ok(acmeRecords.length > 0, `acme has its own ${path}`);
      for (const r of acmeRecords) assert.ok(!demoIds.has(r.id), `${path} ${r.id} belongs to demo`);
      const demoId = [...demoIds][0];
      const byId = await client(acme).GET(`/{tenant}/api/v1/${path as List}/{id}`, {
        params: { path: { tenant: 'acme', id: String(demoId) } },
      });
      assert.equal(byId.response.status, 404, `acme reading demo's ${path}/${demoId}`);
    }
    const crossed = await list('demo', acme, 'items');
    assert.equal(crossed.status, 401, "a token used on another tenant's path is unauthenticated");
  });
});
