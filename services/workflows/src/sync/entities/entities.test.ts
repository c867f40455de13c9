import assert from 'node:assert/strict';
import type { Clients } from '@supply/kit';
import { LoadNames } from '../names';
import { referenceTable, type ReferenceTable } from '../reference-table';
import { checkRow, type CheckedRow } from '../rows';
import { ENTITIES, INVENTORY, SALES, SPECS, type EntitySpec } from './index';

const call = { context: { requestId: 'test', tenant: 'demo' } };
const options = { allow_record_creation: true, allow_record_update: true, continue_on_error: false };

const TABLE: ReferenceTable = {
  items: [
    { id: 11, name: 'SKU-0001' },
    { id: 12, name: 'SKU-0002' },
  ],
  customer_groups: [{ id: 21, name: 'Retail' }],
  sale_types: [{ id: 31, name: 'History' }],
  timing_intervals: [{ id: 41, name: 'week' }],
  uoms: [{ id: 51, name: 'Each', abbreviation: 'ea' }],
  locations: [{ id: 61, name: 'DC-East' }],
  combinations: [{ id: 71, item_id: 11, customer_group_id: 21 }],
};

/** Checks rows as a chunk does, then resolves every name field of the entity. */
async function resolved(
  spec: EntitySpec,
  rows: Array<Record<string, unknown>>,
  clients: Clients,
): Promise<{ names: LoadNames; checked: Array<{ position: number; row: CheckedRow }> }> {
  const checked = rows.map((raw, position) => {
    const result = checkRow(spec, raw, position, `data.${position}`, null);
    assert.deepEqual(result.errors, [], `row ${position} passes its own checks`);
    return { position, row: result.row! };
  });
  const names = new LoadNames(clients);
  await names.resolve(Object.fromEntries(spec.names.map(([field, kind]) => [kind, checked.map((c) => c.row[field]!)])), call);
  return { names, checked };
}

const sale = (overrides: Record<string, unknown> = {}) => ({
  sale_type_name: 'history',
  item_name: 'sku-0001',
  customer_group_name: 'RETAIL',
  sell_date: '2026-01-05',
  timing_interval: 'Week',
  quantity: '12.5',
  uom: 'each',
  ...overrides,
});

describe('sync entity specifications', () => {
  it('lists each entity once under the name requests use, each with its own job kind', () => {
    assert.deepEqual(ENTITIES, ['sales', 'inventory']);
    for (const entity of ENTITIES) assert.equal(SPECS[entity].entity, entity);
    const kinds = ENTITIES.map((e) => SPECS[e].jobKind);
    assert.deepEqual(kinds, ['sales_sync', 'inventory_sync']);
  });

  for (const spec of Object.values(SPECS)) {
    it(`${spec.entity}: key, date, scope and name fields are fields of its rows`, () => {
      const fields = new Set(spec.fields);
      for (const f of [...spec.required, ...spec.keyFields, spec.dateField, ...spec.names.map(([f]) => f)])
        assert.ok(fields.has(f), `${f} is a field of ${spec.entity}`);
      assert.ok(spec.required.includes(spec.dateField) && spec.required.includes('quantity'));
      // A name that must resolve cannot be left out of a row.
      for (const [field] of spec.names) assert.ok(spec.required.includes(field), `${field} is required`);
      // Replace deletes by key: a scope narrows key fields only.
      for (const { field } of Object.values(spec.scope)) assert.ok(spec.keyFields.includes(field), `${field} is a key field`);
    });

    it(`${spec.entity}: a row outside the replace scope is refused on the field the scope constrains`, () => {
      const [scopeField, { field }] = Object.entries(spec.scope)[0]!;
      const raw = Object.fromEntries(spec.fields.map((f) => [f, f === 'quantity' ? 1 : f === spec.dateField ? '2026-01-05' : 'A']));
      assert.deepEqual(checkRow(spec, raw, 0, 'data.0', { [scopeField]: 'a' }).errors, [], 'inside the scope, ignoring case');
      const outside = checkRow(spec, raw, 0, 'data.0', { [scopeField]: 'B' });
      assert.equal(outside.row, null);
      assert.deepEqual(outside.errors, [
        { row: 0, field: `data.0.${field}`, message: `The data.0.${field} must be B: the row lies outside the replace scope.` },
      ]);
    });
  }

  describe('sales', () => {
    it('builds the transactional row with the names as the reference service stores them and the combination it found', async () => {
      const { clients } = referenceTable(TABLE);
      const { names, checked } = await resolved(SALES, [sale()], clients);
      const rows = await SALES.resolveRows(checked, names, { rows_path: 'data', options, call });
      assert.deepEqual(rows, [
        {
          position: 0,
          pair: undefined,
          row: {
            item_customer_group_id: 71,
            item_id: 11,
            item_name: 'SKU-0001',
            customer_group_id: 21,
            customer_group_name: 'Retail',
            sale_type_id: 31,
            sale_type_name: 'History',
            timing_interval_id: 41,
            timing_interval_span: 'week',
            uom_id: 51,
            uom_name: 'Each',
            uom_abbr: 'ea',
            sell_date: '2026-01-05',
            quantity: 12.5,
          },
        },
      ]);
    });

    it('a missing item-customer-group combination is created with the rows when allow_record_creation, else refuses them', async () => {
      const { clients } = referenceTable(TABLE);
      const { names, checked } = await resolved(SALES, [sale(), sale({ item_name: 'SKU-0002' })], clients);
      const allowed = await SALES.resolveRows(checked, names, { rows_path: 'data', options, call });
      assert.deepEqual(
        allowed.map((r) => ('row' in r ? [r.position, r.pair, (r.row as { item_customer_group_id: number }).item_customer_group_id] : r)),
        [
          [0, undefined, 71],
          [1, { item_id: 12, customer_group_id: 21 }, 0],
        ],
      );
      const refused = await SALES.resolveRows(checked, names, {
        rows_path: 'payload',
        options: { ...options, allow_record_creation: false },
        call,
      });
      assert.equal('row' in refused[0]!, true, 'a known combination still loads');
      assert.deepEqual(refused[1], {
        position: 1,
        errors: [
          {
            row: 1,
            field: 'payload.1.customer_group_name',
            message: 'The item SKU-0002 has no combination with customer group RETAIL, and allow_record_creation is false.',
          },
        ],
      });
    });
  });

  describe('inventory', () => {
    it('builds the transactional row; an absent bin or lot is the empty name', async () => {
      const { clients } = referenceTable(TABLE);
      const row = { item_name: 'sku-0002', location_name: 'dc-east', inventory_date: '2026-02-01', quantity: 3, uom: 'EACH' };
      const { names, checked } = await resolved(INVENTORY, [row, { ...row, bin_name: 'B1', lot_name: 'L7' }], clients);
      const rows = await INVENTORY.resolveRows(checked, names, {
        rows_path: 'data',
        options: { ...options, allow_record_creation: false },
        call,
      });
      const common = {
        item_id: 12,
        item_name: 'SKU-0002',
        location_id: 61,
        location_name: 'DC-East',
        inventory_date: '2026-02-01',
        quantity: 3,
        uom_id: 51,
        uom_name: 'Each',
        uom_abbr: 'ea',
      };
      assert.deepEqual(rows, [
        { position: 0, row: { ...common, bin_name: '', lot_name: '' } },
        { position: 1, row: { ...common, bin_name: 'B1', lot_name: 'L7' } },
      ]);
    });
  });

  it("each entity writes and deletes through its own transactional calls, the scope's ids under the call's fields", async () => {
    const seen: Array<[string, unknown]> = [];
    const record = (method: string) => async (request: unknown) => {
      seen.push([method, request]);
      return {
        deleted: 4,
        created: 0,
        updated: 0,
        unchanged: 0,
        rejected: 0,
        outcomes: [],
        already_created: 0,
        already_updated: 0,
        already_unchanged: 0,
      };
    };
    const clients = {
      transactional: {
        applySales: record('applySales'),
        applyInventory: record('applyInventory'),
        deleteSalesOutsideLoad: record('deleteSalesOutsideLoad'),
        deleteInventoryOutsideLoad: record('deleteInventoryOutsideLoad'),
      },
    } as unknown as Clients;
    const flags = { dry_run: true, refuse_creates: false, refuse_updates: true, apply_id: 'u:0' };
    await SALES.apply(clients, 'job:1', [], flags, call);
    await INVENTORY.apply(clients, 'job:2', [], flags, call);
    assert.equal((await SALES.deleteOutsideLoad(clients, 'job:1', { sale_type: [31] }, true, call)).deleted, 4);
    await INVENTORY.deleteOutsideLoad(clients, 'job:2', { location: [61], item: [11, 12] }, false, call);
    assert.deepEqual(seen, [
      ['applySales', { load_id: 'job:1', rows: [], ...flags }],
      ['applyInventory', { load_id: 'job:2', rows: [], ...flags }],
      ['deleteSalesOutsideLoad', { load_id: 'job:1', sale_type_ids: [31], customer_group_ids: [], dry_run: true }],
      ['deleteInventoryOutsideLoad', { load_id: 'job:2', location_ids: [61], item_ids: [11, 12], dry_run: false }],
    ]);
  });
});
