import assert from 'node:assert/strict';
import { startSystem, api, type TestSystem } from '../support/system';

describe('reference writes through the gateway', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let writer: string;
  let readOnly: string;
  let acmeWriter: string;

  before(async () => {
    sys = await startSystem();
  });
  // Rate limits count per token (120 a minute): each test writes with tokens of its own.
  beforeEach(async () => {
    writer = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read', 'public_api.write']);
    readOnly = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    acmeWriter = await sys.tokenFor('acme', 'admin@acme.test', ['*']);
  });
  after(() => sys?.stop());

  const call = (method: string, path: string, body?: unknown, token = writer, tenant = 'demo') =>
    api(sys, `/${tenant}/api/v1/${path}`, { method, token, body });

  it('creates one item (201 envelope), reads it back by id and in the list, and patches it', async () => {
    const created = await call('POST', 'items', {
      name: 'Widget Pro',
      description: 'A test widget',
      uom: 'cs',
      unit_cost: 4.5,
      unit_price: 9.99,
      hierarchy: { category: 'Gadgets', Brand: 'Acme' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.links, '/demo/api/v1/items');
    const item = created.body.data[0];
    assert.deepEqual(
      { ...item, id: undefined, uom_id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        name: 'Widget Pro',
        description: 'A test widget',
        uom: 'Case',
        uom_id: undefined,
        unit_cost: 4.5,
        unit_price: 9.99,
        hierarchy: { Category: 'Gadgets', Brand: 'Acme' },
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.match(item.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

    const byId = await call('GET', `items/${item.id}`);
    assert.deepEqual(byId.body.data, [item]);
    const listed = await call('GET', 'items?filter[name]=widget pro');
    assert.deepEqual(listed.body.data, [item]);

    const patched = await call('PATCH', `items/${item.id}`, { unit_price: 12, hierarchy: { Brand: null }, uom: 'Each' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.data[0].unit_price, 12);
    assert.equal(patched.body.data[0].unit_cost, 4.5, 'fields not sent keep their value');
    assert.equal(patched.body.data[0].uom, 'Each');
    assert.deepEqual(patched.body.data[0].hierarchy, { Category: 'Gadgets' });
    assert.deepEqual((await call('GET', `items/${item.id}`)).body.data, patched.body.data);
  });

  it('creates an array of records all or nothing, keying errors by index', async () => {
    const ok = await call('POST', 'uoms', [
      { name: 'Pallet', abbreviation: 'plt' },
      { name: 'Litre', abbreviation: 'l' },
    ]);
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(
      ok.body.data.map((u: any) => u.name),
      ['Pallet', 'Litre'],
    );

    const bad = await call('POST', 'uoms', [
      { name: 'Gram', abbreviation: 'g' },
      { name: 'PALLET', abbreviation: 'p2' },
      { name: 'Gram', abbreviation: 'g3' },
    ]);
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors['1.name'], ['The 1.name has already been taken.']);
    assert.deepEqual(bad.body.errors['2.name'], ['The 2.name field has a duplicate value.']);
    assert.equal((await call('GET', 'uoms?filter[name]=Gram')).body.data.length, 0, 'nothing of a refused batch is written');
  });

  it('refuses a duplicate name in any case with "has already been taken"', async () => {
    const res = await call('POST', 'items', { name: 'sku-0001', uom: 'ea' });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body, { message: 'The name has already been taken.', errors: { name: ['The name has already been taken.'] } });
    const location = (await call('GET', 'locations?filter[name]=DC-West')).body.data[0];
    const renamed = await call('PATCH', `locations/${location.id}`, { name: 'dc-east' });
    assert.equal(renamed.status, 422);
    assert.deepEqual(renamed.body.errors, { name: ['The name has already been taken.'] });
    const same = await call('PATCH', `locations/${location.id}`, { name: 'DC-West' });
    assert.equal(same.status, 200, 'a record keeps its own name');
  });

  it('refuses unknown and protected fields as prohibited', async () => {
    const res = await call('POST', 'locations', {
      name: 'Depot 9',
      type: 'warehouse',
      id: 5,
      tenant: 'acme',
      created_at: '2020-01-01',
      colour: 'red',
    });
    assert.equal(res.status, 422);
    for (const field of ['id', 'tenant', 'created_at', 'colour']) {
      assert.deepEqual(res.body.errors[field], [`The ${field.replace('_', ' ')} field is prohibited.`]);
    }
    assert.match(res.body.message, /\(and 3 more errors\)$/);
    const patch = await call('PATCH', 'uoms/1', { updated_at: 'now' });
    assert.equal(patch.status, 422);
    assert.deepEqual(patch.body.errors, { updated_at: ['The updated at field is prohibited.'] });
  });

  it('validates types, required fields, enums and references with field paths', async () => {
    const res = await call('POST', 'items', [
      { name: 'A-1', uom: 'parsec' },
      { uom: 'ea', unit_cost: -1 },
    ]);
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.errors['1.name'], ['The 1.name field is required.']);
    assert.ok(res.body.errors['1.unit_cost']);
    const ref = await call('POST', 'items', { name: 'A-1', uom: 'parsec', hierarchy: { Colour: 'red' } });
    assert.equal(ref.status, 422);
    assert.deepEqual(ref.body.errors.uom, ['The selected uom is invalid.']);
    assert.ok(ref.body.errors['hierarchy.Colour']);
    const location = await call('POST', 'locations', { name: 'Moon Base', type: 'spaceport' });
    assert.deepEqual(location.body.errors, { type: ['The selected type is invalid.'] });
  });

  it('takes up to 1000 records per POST and refuses 1001 with 422', async () => {
    const batch = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ name: `${prefix}-${i}`, type: 'store' }));
    const tooMany = await call('POST', 'locations', batch(1001, 'Big'));
    assert.equal(tooMany.status, 422);
    assert.deepEqual(Object.keys(tooMany.body.errors), ['body']);
    const max = await call('POST', 'locations', batch(1000, 'Store'));
    assert.equal(max.status, 201, max.text);
    assert.equal(max.body.data.length, 1000);
    assert.equal((await call('GET', 'locations?filter[name]=store-999')).body.data.length, 1);
    const empty = await call('POST', 'locations', []);
    assert.equal(empty.status, 422);
  });

  it('writes item-locations with planning parameters and checks the rules that tie them', async () => {
    const created = await call('POST', 'item-locations', {
      item_name: 'SKU-0001',
      location_name: 'Plant-Central',
      lead_time: 3,
      lot_sizing_rule: 'fixed_order_quantity',
      fixed_order_qty: 250,
      safety_stock: 40,
    });
    assert.equal(created.status, 201, created.text);
    const il = created.body.data[0];
    assert.equal(il.item_name, 'SKU-0001');
    assert.equal(il.location_name, 'Plant-Central');
    assert.equal(il.holding_rate, 0.25, 'omitted parameters take their defaults');
    const item = (await call('GET', 'items?filter[name]=SKU-0001')).body.data[0];
    assert.equal(il.unit_cost, item.unit_cost, "unit_cost defaults to the item's");

    const again = await call('POST', 'item-locations', { item_name: 'sku-0001', location_name: 'plant-central' });
    assert.equal(again.status, 422);
    assert.ok(again.body.errors.location_name);

    const eoq = await call('PATCH', `item-locations/${il.id}`, { lot_sizing_rule: 'economic_order_quantity' });
    assert.equal(eoq.status, 422);
    assert.ok(eoq.body.errors.ordering_cost, eoq.text);
    const fixed = await call('PATCH', `item-locations/${il.id}`, { lot_sizing_rule: 'economic_order_quantity', ordering_cost: 80 });
    assert.equal(fixed.status, 200, fixed.text);
    assert.equal(fixed.body.data[0].ordering_cost, 80);

    const unknown = await call('POST', 'item-locations', { item_name: 'SKU-9999', location_name: 'Nowhere' });
    assert.deepEqual(unknown.body.errors, {
      item_name: ['The selected item name is invalid.'],
      location_name: ['The selected location name is invalid.'],
    });
  });

  it('writes calendars and views, and keeps a view inside its calendar', async () => {
    const calendar = await call('POST', 'calendars', { name: 'Monthly 2026', bucket: 'month', start_date: '2026-01-15', periods: 12 });
    assert.equal(calendar.status, 201, calendar.text);
    assert.equal(calendar.body.data[0].week_start, 'monday');
    const ids = (await call('GET', 'item-locations?per_page=3')).body.data.map((il: any) => il.id);
    const view = await call('POST', 'views', { name: 'Monthly pilot', calendar_name: 'monthly 2026', horizon: 6, item_location_ids: ids });
    assert.equal(view.status, 201, view.text);
    assert.deepEqual(view.body.data[0].item_location_ids, ids);
    assert.equal(view.body.data[0].bucket, 'month');
    assert.deepEqual((await call('GET', `views/${view.body.data[0].id}`)).body.data, view.body.data);

    const tooLong = await call('PATCH', `views/${view.body.data[0].id}`, { horizon: 13 });
    assert.equal(tooLong.status, 422);
    assert.ok(tooLong.body.errors.horizon);
    const shrink = await call('PATCH', `calendars/${calendar.body.data[0].id}`, { periods: 3 });
    assert.equal(shrink.status, 422);
    assert.ok(shrink.body.errors.periods);
    const badIds = await call('POST', 'views', { name: 'Broken', calendar_name: 'Weekly', item_location_ids: [ids[0], 99999999] });
    assert.deepEqual(badIds.body.errors, { 'item_location_ids.1': ['The selected item_location_ids.1 is invalid.'] });
    const badDate = await call('POST', 'calendars', { name: 'Bad', bucket: 'week', start_date: '2026-02-30', periods: 4 });
    assert.ok(badDate.body.errors.start_date);
  });

  it('adds hierarchy levels that items then use', async () => {
    const level = await call('POST', 'hierarchy-levels', { kind: 'item', name: 'Segment' });
    assert.equal(level.status, 201, level.text);
    assert.equal(level.body.data[0].position, 3);
    const item = await call('POST', 'items', { name: 'Segmented', uom: 'ea', hierarchy: { Segment: 'Premium', Category: 'Snacks' } });
    assert.equal(item.status, 201, item.text);
    assert.deepEqual(item.body.data[0].hierarchy, { Category: 'Snacks', Segment: 'Premium' });
    const renamed = await call('PATCH', `hierarchy-levels/${level.body.data[0].id}`, { name: 'Tier' });
    assert.equal(renamed.status, 200);
    assert.deepEqual((await call('GET', `items/${item.body.data[0].id}`)).body.data[0].hierarchy, { Category: 'Snacks', Tier: 'Premium' });
    const clash = await call('POST', 'hierarchy-levels', { kind: 'customer_group', name: 'brand' });
    assert.deepEqual(clash.body.errors, { name: ['The name has already been taken.'] });
    const kind = await call('PATCH', `hierarchy-levels/${level.body.data[0].id}`, { kind: 'customer_group' });
    assert.deepEqual(kind.body.errors, { kind: ['The kind field is prohibited.'] });
  });

  it('refuses writes without the write scope or the planner level with 403 problems', async () => {
    const scope = await call('POST', 'uoms', { name: 'Dozen', abbreviation: 'dz' }, readOnly);
    assert.equal(scope.status, 403);
    assert.equal(scope.body.type, '/problems/insufficient-scope');
    const viewerRead = await sys.tokenFor('demo', 'viewer@demo.test', ['public_api.read']);
    const viewer = await call('POST', 'uoms', { name: 'Dozen', abbreviation: 'dz' }, viewerRead);
    assert.equal(viewer.status, 403, 'a viewer holds no write scope');

    // A write token whose creator is then left with View on master data: gate (b) refuses it.
    const demoted = await sys.tokenFor('demo', 'nodemand@demo.test', ['public_api.read', 'public_api.write']);
    await sys.clients.tokens.updateUser(
      { email: 'nodemand@demo.test', levels: { public_api: 'planner', master_data: 'view' } },
      { context: { requestId: 'test', tenant: 'demo' } },
    );
    const level = await call('POST', 'uoms', { name: 'Dozen', abbreviation: 'dz' }, demoted);
    assert.equal(level.status, 403, level.text);
    assert.equal(level.body.type, '/problems/insufficient-permission');
    assert.equal((await call('GET', 'uoms', undefined, demoted)).status, 200, 'view still reads');
    assert.equal((await call('GET', 'uoms?filter[name]=Dozen')).body.data.length, 0);
  });

  it("keeps tenants apart on writes: names are per tenant, another tenant's id is 404", async () => {
    const own = await call('POST', 'items', { name: 'SKU-0001-acme-only', uom: 'kg' }, acmeWriter, 'acme');
    assert.equal(own.status, 201, own.text);
    const sameName = await call('POST', 'items', { name: 'Widget Pro', uom: 'ea' }, acmeWriter, 'acme');
    assert.equal(sameName.status, 201, "demo's item names do not exist in acme");
    const demoItem = (await call('GET', 'items?filter[name]=SKU-0002')).body.data[0];
    const patch = await call('PATCH', `items/${demoItem.id}`, { unit_price: 1 }, acmeWriter, 'acme');
    assert.equal(patch.status, 404);
    assert.equal((await call('GET', `items/${demoItem.id}`)).body.data[0].unit_price, demoItem.unit_price);
    assert.equal((await call('GET', 'items?filter[name]=SKU-0001-acme-only')).body.data.length, 0);
  });
});
