import assert from 'node:assert/strict';
import type { Clients } from '@supply/kit';
import { supply_transactional_v1 as tx } from '@supply/contracts';
import { ChunkProcessor, type LoadContext } from './chunks';
import { INVENTORY, SALES, type EntitySpec } from './entities';
import { referenceTable } from './reference-table';
import type { ChunkDoc } from './staging';

/**
 * Reference data of two items, and a transactional service in which item 11 has records
 * already (its rows update) and item 12 has none (its rows create). Every apply is recorded.
 */
function system() {
  const { clients: reference } = referenceTable({
    items: [
      { id: 11, name: 'SKU-0001' },
      { id: 12, name: 'SKU-0002' },
    ],
    customer_groups: [{ id: 21, name: 'Retail' }],
    sale_types: [{ id: 31, name: 'History' }],
    timing_intervals: [{ id: 41, name: 'week' }],
    uoms: [{ id: 51, name: 'Each', abbreviation: 'ea' }],
    locations: [{ id: 61, name: 'DC-East' }],
    combinations: [
      { id: 71, item_id: 11, customer_group_id: 21 },
      { id: 72, item_id: 12, customer_group_id: 21 },
    ],
  });
  const applies: Array<{
    method: string;
    request: { rows: Array<{ item_id: number }>; dry_run: boolean; refuse_creates: boolean; refuse_updates: boolean };
  }> = [];
  const apply = (method: string) => async (request: (typeof applies)[number]['request']) => {
    applies.push({ method, request });
    const outcomes = request.rows.map((r) =>
      r.item_id === 11 ? tx.ApplyOutcome.APPLY_OUTCOME_UPDATED : tx.ApplyOutcome.APPLY_OUTCOME_CREATED,
    );
    const created = request.dry_run ? 0 : outcomes.filter((o) => o === tx.ApplyOutcome.APPLY_OUTCOME_CREATED).length;
    return {
      created,
      updated: request.dry_run ? 0 : outcomes.length - created,
      unchanged: 0,
      rejected: 0,
      outcomes,
      already_created: 0,
      already_updated: 0,
      already_unchanged: 0,
    };
  };
  const clients = {
    reference: reference.reference,
    transactional: { applySales: apply('applySales'), applyInventory: apply('applyInventory') },
  } as unknown as Clients;
  return { processor: new ChunkProcessor(clients), applies };
}

function context(spec: EntitySpec, allowCreation: boolean): LoadContext {
  return {
    tenant: 'demo',
    load_id: `job:${spec.entity}:${allowCreation}`,
    spec,
    scope: null,
    options: { allow_record_creation: allowCreation, allow_record_update: true, continue_on_error: true },
    rows_path: 'data',
    columns: null,
    call: { context: { requestId: 'test', tenant: 'demo' } },
  };
}

const chunkOf = (rows: unknown[]): ChunkDoc => ({ _id: 'upload:0', upload: 'upload', seq: 0, first_row: 0, rows });
const inventoryRow = (item: string) => ({
  item_name: item,
  location_name: 'DC-East',
  inventory_date: '2026-02-01',
  quantity: 1,
  uom: 'ea',
});
const salesRow = (item: string) => ({
  sale_type_name: 'History',
  item_name: item,
  customer_group_name: 'Retail',
  sell_date: '2026-01-05',
  timing_interval: 'week',
  quantity: 1,
  uom: 'ea',
});

describe('a sync chunk', () => {
  it('inventory without allow_record_creation: a row that would create a record is refused, one that updates is applied', async () => {
    const { processor, applies } = system();
    const ctx = context(INVENTORY, false);
    const chunk = chunkOf([inventoryRow('SKU-0002'), inventoryRow('SKU-0001')]);
    const { plan, resolved } = await processor.plan(ctx, chunk);
    assert.deepEqual(plan.outcomes, ['invalid', 'update']);
    assert.deepEqual(plan.errors, [
      {
        row: 0,
        field: 'data.0',
        message:
          'The data.0 row is refused: No inventory record with this item, location, bin, lot and inventory date exists, and allow_record_creation is false.',
      },
    ]);
    assert.deepEqual(
      applies.map((a) => [a.method, a.request.dry_run]),
      [['applyInventory', true]],
      'planning writes nothing',
    );

    const done = await processor.apply(ctx, chunk, plan, resolved);
    assert.deepEqual(done, { created: 0, updated: 1, unchanged: 0, rejected: 0 });
    const write = applies[1]!.request;
    assert.deepEqual([write.dry_run, write.refuse_creates, write.rows.map((r) => r.item_id)], [false, true, [11]]);
  });

  it('sales without allow_record_creation: a new record of an existing combination is still created', async () => {
    const { processor, applies } = system();
    const ctx = context(SALES, false);
    const chunk = chunkOf([salesRow('SKU-0002'), salesRow('SKU-0001')]);
    const { plan, resolved } = await processor.plan(ctx, chunk);
    assert.deepEqual(plan.outcomes, ['create', 'update']);
    assert.deepEqual(plan.errors, []);
    const done = await processor.apply(ctx, chunk, plan, resolved);
    assert.deepEqual(done, { created: 1, updated: 1, unchanged: 0, rejected: 0 });
    assert.deepEqual(
      applies.map((a) => [a.method, a.request.dry_run, a.request.refuse_creates]),
      [
        ['applySales', true, false],
        ['applySales', false, false],
      ],
    );
  });

  it('a name the reference service does not know makes its row invalid, on that field', async () => {
    const { processor } = system();
    const { plan } = await processor.plan(context(INVENTORY, true), chunkOf([inventoryRow('SKU-0404'), inventoryRow('SKU-0002')]));
    assert.deepEqual(plan.outcomes, ['invalid', 'create']);
    assert.deepEqual(plan.errors, [{ row: 0, field: 'data.0.item_name', message: 'The selected data.0.item_name is invalid.' }]);
  });
});
