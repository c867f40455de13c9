import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, ValidationError, type Clients, type Store } from '@supply/kit';
import { supply_transactional_v1 as pb } from '@supply/contracts';
import { openInventory } from '../inventory/repository';
import { applyInventory, type InventoryDeps } from '../inventory/service';
import { openSales } from '../sales/repository';
import { applySales, deleteSalesOutsideLoad, type SalesDeps } from '../sales/service';
import { timestamp } from './records';

const { APPLY_OUTCOME_CREATED: CREATED, APPLY_OUTCOME_UPDATED: UPDATED, APPLY_OUTCOME_UNCHANGED: UNCHANGED } = pb.ApplyOutcome;
const { APPLY_OUTCOME_REJECTED: REJECTED, APPLY_OUTCOME_SUPERSEDED: SUPERSEDED } = pb.ApplyOutcome;
const MICROSECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const sale = (overrides: Partial<pb.SalesRow> = {}): pb.SalesRow => ({
  item_customer_group_id: 1,
  item_id: 11,
  item_name: 'SKU-0001',
  customer_group_id: 21,
  customer_group_name: 'Retail',
  sale_type_id: 1,
  sale_type_name: 'History',
  timing_interval_id: 2,
  timing_interval_span: 'week',
  uom_id: 1,
  uom_name: 'Each',
  uom_abbr: 'ea',
  sell_date: '2025-01-06',
  quantity: 5,
  ...overrides,
});

const week = (i: number) => new Date(Date.UTC(2025, 0, 6 + 7 * i)).toISOString().slice(0, 10);

describe('apply and replace of sales and inventory rows', function () {
  this.timeout(30_000);
  let dir: string;
  let store: Store;
  let sales: SalesDeps;
  let inventory: InventoryDeps;
  const apply = (rows: pb.SalesRow[], options: Partial<pb.ApplySalesRequest> = {}, tenant = 't1') =>
    applySales(sales, tenant, { load_id: 'load-1', rows, refuse_creates: false, refuse_updates: false, dry_run: false, ...options });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'apply-'));
    store = await openStore({ database: 'transactional', dataDir: dir });
    sales = { sales: await openSales(store), clients: {} as Clients, now: () => timestamp() };
    inventory = { inventory: await openInventory(store), now: () => timestamp() };
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates, then reports the same rows unchanged and writes nothing', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => sale({ sell_date: week(i), quantity: i }));
    const first = await apply(rows);
    assert.deepEqual([first.created, first.updated, first.unchanged, first.rejected], [30, 0, 0, 0]);
    const stored = await sales.sales.find({}, { sort: [['_id', 1]] });
    assert.equal(stored.length, 30);
    assert.ok(stored.every((r) => Number.isInteger(r._id) && MICROSECONDS.test(r.created_at) && r.created_at === r.updated_at));
    const again = await apply(rows);
    assert.deepEqual([again.created, again.updated, again.unchanged], [0, 0, 30]);
    assert.ok(again.outcomes.every((o) => o === UNCHANGED));
    assert.deepEqual(await sales.sales.find({}, { sort: [['_id', 1]] }), stored);
  });

  it('with an apply id, a repeat reports what the first call did, and writes nothing', async () => {
    await apply([sale({ sell_date: week(0), quantity: 1 })], { load_id: 'earlier' });
    const rows = [
      sale({ sell_date: week(0), quantity: 2 }),
      sale({ sell_date: week(1), quantity: 3 }),
      sale({ sell_date: week(2), quantity: 4 }),
    ];
    const first = await apply(rows, { apply_id: 'chunk-7' });
    assert.deepEqual([first.created, first.updated, first.unchanged, first.already_created, first.already_updated], [2, 1, 0, 0, 0]);
    const stored = await sales.sales.find({}, { sort: [['_id', 1]] });
    const again = await apply(rows, { apply_id: 'chunk-7' });
    assert.deepEqual(again.outcomes, first.outcomes);
    assert.deepEqual([again.created, again.updated, again.already_created, again.already_updated], [2, 1, 2, 1]);
    assert.deepEqual(await sales.sales.find({}, { sort: [['_id', 1]] }), stored, 'nothing rewritten');
    const dry = await apply(rows, { apply_id: 'chunk-7', dry_run: true });
    assert.deepEqual([dry.already_created, dry.already_updated], [2, 1]);
    const otherChunk = await apply(rows, { apply_id: 'chunk-8' });
    assert.deepEqual([otherChunk.created, otherChunk.updated, otherChunk.unchanged, otherChunk.already_created], [0, 0, 3, 0]);
  });

  it('with an apply id, a repeat after a part-written first call counts the written part as the first call did', async () => {
    const rows = [sale({ sell_date: week(0) }), sale({ sell_date: week(1) }), sale({ sell_date: week(2) })];
    // The first call died after writing two of its rows.
    await apply(rows.slice(0, 2), { apply_id: 'chunk-9' });
    const dry = await apply(rows, { apply_id: 'chunk-9', dry_run: true });
    assert.deepEqual([dry.created, dry.already_created], [3, 2], 'two written by the first call, one still to create');
    const again = await apply(rows, { apply_id: 'chunk-9' });
    assert.deepEqual([again.created, again.unchanged, again.already_created], [3, 0, 2]);
    assert.equal(await sales.sales.count({}), 3);
  });

  it('on a match changes only quantity and uom, keeping id and created_at', async () => {
    await apply([sale()]);
    const [before] = await sales.sales.find({});
    const result = await apply([
      sale({ quantity: 7.25, uom_id: 2, uom_name: 'Case', uom_abbr: 'cs', item_name: 'Renamed', customer_group_name: 'Other' }),
    ]);
    assert.deepEqual(result.outcomes, [UPDATED]);
    const [after] = await sales.sales.find({});
    assert.equal(after!._id, before!._id);
    assert.equal(after!.created_at, before!.created_at);
    assert.notEqual(after!.updated_at, before!.updated_at);
    assert.deepEqual([after!.quantity, after!.uom_name, after!.uom_abbr], [7.25, 'Case', 'cs']);
    assert.deepEqual([after!.item_name, after!.customer_group_name], ['SKU-0001', 'Retail']);
  });

  it('lets the last of several rows with one key win', async () => {
    const result = await apply([sale({ quantity: 1 }), sale({ quantity: 2 }), sale({ sell_date: week(1) }), sale({ quantity: 3 })]);
    assert.deepEqual(result.outcomes, [SUPERSEDED, SUPERSEDED, CREATED, CREATED]);
    assert.deepEqual(
      (await sales.sales.find({}, { sort: [['sell_date', 1]] })).map((r) => r.quantity),
      [3, 5],
    );
  });

  it('refuses updates or creates row by row, and a dry run writes nothing', async () => {
    await apply([sale()]);
    const refused = await apply([sale({ quantity: 9 }), sale({ sell_date: week(1) })], { refuse_updates: true });
    assert.deepEqual(refused.outcomes, [REJECTED, CREATED]);
    const noCreates = await apply([sale({ quantity: 9 }), sale({ sell_date: week(2) })], { refuse_creates: true });
    assert.deepEqual(noCreates.outcomes, [UPDATED, REJECTED]);
    const dry = await apply([sale({ quantity: 10 }), sale({ sell_date: week(3) })], { dry_run: true });
    assert.deepEqual(dry.outcomes, [UPDATED, CREATED]);
    assert.deepEqual(
      (await sales.sales.find({}, { sort: [['sell_date', 1]] })).map((r) => [r.sell_date, r.quantity]),
      [
        [week(0), 9],
        [week(1), 5],
      ],
    );
  });

  it('replace deletes what the load did not touch, inside the scope only, and keeps other tenants', async () => {
    const history = Array.from({ length: 5 }, (_, i) => sale({ sell_date: week(i) }));
    const otherGroup = history.map((row) => ({ ...row, item_customer_group_id: 2, customer_group_id: 22, customer_group_name: 'Online' }));
    await apply([...history, ...otherGroup], { load_id: 'old' });
    await apply(history, { load_id: 'old' }, 't2');
    // The new load re-sends two records unchanged and one changed: the other two of the scope go.
    const load = await apply([history[0]!, history[1]!, { ...history[2]!, quantity: 8 }], { load_id: 'new' });
    assert.deepEqual(load.outcomes, [UNCHANGED, UNCHANGED, UPDATED]);
    const scope = { load_id: 'new', sale_type_ids: [1], customer_group_ids: [21], dry_run: false };
    assert.deepEqual(await deleteSalesOutsideLoad(sales, 't1', { ...scope, dry_run: true }), { deleted: 2 });
    assert.deepEqual(await deleteSalesOutsideLoad(sales, 't1', scope), { deleted: 2 });
    const left = await sales.sales.find({ tenant: 't1', customer_group_id: 21 }, { sort: [['sell_date', 1]] });
    assert.deepEqual(
      left.map((r) => r.sell_date),
      [week(0), week(1), week(2)],
    );
    assert.equal(await sales.sales.count({ tenant: 't1', customer_group_id: 22 }), 5);
    assert.equal(await sales.sales.count({ tenant: 't2' }), 5);
    await assert.rejects(deleteSalesOutsideLoad(sales, 't1', { ...scope, sale_type_ids: [], customer_group_ids: [] }), ValidationError);
  });

  it('names each invalid field by row', async () => {
    await assert.rejects(apply([sale(), sale({ quantity: -1, sell_date: '2025-02-30', item_name: '' })]), (error: ValidationError) => {
      assert.deepEqual(Object.keys(error.fields).sort(), ['rows.1.item_name', 'rows.1.quantity', 'rows.1.sell_date']);
      return true;
    });
    assert.equal(await sales.sales.count({}), 0);
  });

  it('keys inventory by item, location, bin, lot and date: no bin is a key of its own', async () => {
    const row: pb.InventoryRow = {
      item_id: 11,
      item_name: 'SKU-0001',
      location_id: 3,
      location_name: 'DC-East',
      bin_name: '',
      lot_name: '',
      inventory_date: '2025-01-05',
      quantity: 4,
      uom_id: 1,
      uom_name: 'Each',
      uom_abbr: 'ea',
    };
    const request = { load_id: 'l', refuse_creates: false, refuse_updates: false, dry_run: false };
    const first = await applyInventory(inventory, 't1', {
      ...request,
      rows: [row, { ...row, bin_name: 'B1' }, { ...row, bin_name: 'B1', lot_name: 'L9' }],
    });
    assert.deepEqual(first.outcomes, [CREATED, CREATED, CREATED]);
    const second = await applyInventory(inventory, 't1', {
      ...request,
      rows: [
        { ...row, quantity: 5 },
        { ...row, bin_name: 'B1' },
      ],
    });
    assert.deepEqual(second.outcomes, [UPDATED, UNCHANGED]);
    assert.equal(await inventory.inventory.count({ tenant: 't1' }), 3);
  });
});
