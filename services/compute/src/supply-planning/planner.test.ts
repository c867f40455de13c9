import assert from 'node:assert/strict';
import type { Clients } from '@supply/kit';
import type { supply_reference_v1 as ref, supply_transactional_v1 as tx } from '@supply/contracts';
import { bucketsFromCalendar } from '../engines/mrp';
import { BucketClock } from './calendar';
import { planBatch, plannedMode, type Outcome, type RunSpec } from './planner';
import type { GenerationMode } from './request';

const PERIODS = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 8 });
const weeks = (start: string, count: number) => bucketsFromCalendar({ start, bucket: 'week', count });

function itemLocation(id: number, item: number, location: 'DC-East' | 'Partner-Mart'): ref.ItemLocation {
  return {
    id,
    item_id: item,
    item_name: `SKU-${item}`,
    location_id: location === 'DC-East' ? 1 : 2,
    location_name: location,
    lead_time: 0,
    safety_stock: 0,
    min_order_qty: 0,
    order_multiple: 0,
    max_order_qty: 0,
    lot_sizing_rule: 'lot_for_lot',
    fixed_order_qty: 0,
    ordering_cost: 0,
    holding_rate: 0.25,
    unit_cost: 2,
    periods_of_supply: 0,
    service_level: 0,
    partner: location === 'Partner-Mart',
    created_at: '',
    updated_at: '',
  };
}

type Sale = Pick<tx.SalesRecord, 'item_id' | 'customer_group_id' | 'sale_type_name' | 'sell_date' | 'quantity'>;

/**
 * A tenant like the demo: Retail is served by DC-East, Partner-Mart is the partner's own account.
 * SKU-1: History for Retail a year back, sell-through reported by Partner-Mart (13 weeks of 6).
 * SKU-2: at the partner, which reports nothing; History of Partner-Mart a year back (4 a week).
 * SKU-3: at DC-East, with a Forecast for Retail (9 a week).
 */
const ITEM_LOCATIONS = [
  itemLocation(1, 1, 'DC-East'),
  itemLocation(2, 1, 'Partner-Mart'),
  itemLocation(3, 2, 'Partner-Mart'),
  itemLocation(4, 3, 'DC-East'),
];
const SALES: Sale[] = [
  ...weeks('2024-01-08', 8).map((sell_date) => ({ item_id: 1, customer_group_id: 1, sale_type_name: 'History', sell_date, quantity: 10 })),
  ...weeks('2024-10-07', 13).map((sell_date) => ({ item_id: 1, customer_group_id: 2, sale_type_name: 'History', sell_date, quantity: 6 })),
  ...weeks('2024-01-08', 8).map((sell_date) => ({ item_id: 2, customer_group_id: 2, sale_type_name: 'History', sell_date, quantity: 4 })),
  ...PERIODS.map((sell_date) => ({ item_id: 3, customer_group_id: 1, sale_type_name: 'Forecast', sell_date, quantity: 9 })),
];

function fakeClients(written: number[]): Clients {
  const page = <R>(records: R[]) => ({ records, page: { page: 1, per_page: 100, total: records.length } });
  const done = { has_more: false, first_position: '', last_position: '' };
  return {
    reference: {
      listCustomerGroups: async () =>
        page([
          { id: 1, name: 'Retail' },
          { id: 2, name: 'Partner-Mart' },
        ]),
      listLocations: async () =>
        page([
          { id: 1, name: 'DC-East', type: 'distribution_center' },
          { id: 2, name: 'Partner-Mart', type: 'partner' },
        ]),
      listItemLocations: async ({ filter_item_name }: ref.ListRequest) =>
        page(ITEM_LOCATIONS.filter((il) => il.item_name === filter_item_name)),
    },
    transactional: {
      querySales: async ({ filter }: tx.QuerySalesRequest) => {
        const items = new Set(ITEM_LOCATIONS.filter((il) => filter!.item_names.includes(il.item_name)).map((il) => il.item_id));
        return { records: SALES.filter((s) => items.has(s.item_id)), page: done };
      },
      queryInventory: async () => ({
        records: [{ item_id: 1, location_id: 2, inventory_date: '2025-01-05', quantity: 30 }],
        page: done,
      }),
      replaceSupplyPlan: async ({ target }: tx.ReplaceSupplyPlanRequest) => {
        written.push(target!.item_location_id);
        return { written: PERIODS.length, deleted: 0 };
      },
      replaceFinancialPlan: async () => ({ written: PERIODS.length, deleted: 0 }),
    },
  } as unknown as Clients;
}

async function planAll(mode: GenerationMode) {
  const written: number[] = [];
  const run: RunSpec = {
    plan_run_id: 1,
    mode,
    supply_policy: 'unconstrained',
    view: { id: 1, name: 'Default' },
    clock: new BucketClock('week', PERIODS),
  };
  const records = ITEM_LOCATIONS.map((item_location) => ({ item_location, unit_price: 5, uom: 'Each' }));
  const outcomes = await planBatch(fakeClients(written), run, records);
  const plans = outcomes.map((o: Outcome) => {
    assert.ok(o.ok, !o.ok ? `${o.field}: ${o.message}` : '');
    return o.plan;
  });
  return { plans, written };
}

describe('supply planning: modes over a batch', () => {
  it('partner mode plans every item-location: sell-through where the partner reports it, else forecast, else history', async () => {
    const { plans, written } = await planAll('partner');
    assert.deepEqual(written.sort(), [1, 2, 3, 4], 'every item-location planned and stored');
    assert.deepEqual(
      plans.map((p) => p.mode),
      ['partner', 'partner', 'partner', 'partner'],
    );
    assert.deepEqual(
      plans.map((p) => p.demand!.source),
      ['history', 'sell_through', 'history', 'forecast'],
    );

    const [dc, partner, silent, forecast] = plans;
    assert.deepEqual(
      dc!.rows.map((r) => r.gross_requirements),
      new Array(8).fill(10),
      "DC-East: Retail's History a year earlier",
    );
    assert.deepEqual(
      partner!.rows.map((r) => r.gross_requirements),
      new Array(8).fill(6),
      "the partner's 13-week sell-through average",
    );
    assert.deepEqual(
      [partner!.demand!.basis, partner!.demand!.sell_through_from, partner!.demand!.sell_through_to],
      ['sell_through_average', '2024-10-07', '2025-01-05'],
    );
    assert.equal(partner!.on_hand, 30, "netting starts from the partner's on-hand");
    assert.deepEqual(
      partner!.rows.map((r) => r.planned_receipts),
      [0, 0, 0, 0, 0, 6, 6, 6],
      '30 on hand covers five weeks of 6',
    );
    assert.deepEqual(
      silent!.rows.map((r) => r.gross_requirements),
      new Array(8).fill(4),
      'no sell-through reported: its own History a year earlier',
    );
    assert.deepEqual([silent!.demand!.customer_groups, silent!.demand!.basis], [['Partner-Mart'], 'forecast_else_history']);
    assert.deepEqual(
      forecast!.rows.map((r) => r.gross_requirements),
      new Array(8).fill(9),
      'our Forecast',
    );
    assert.equal(forecast!.demand!.forecast_buckets, 8);
  });

  it('auto plans partner item-locations as partner and the rest standard; standard never uses sell-through', async () => {
    const auto = await planAll('auto');
    assert.deepEqual(
      auto.plans.map((p) => [p.mode, p.demand!.source]),
      [
        ['standard', 'history'],
        ['partner', 'sell_through'],
        ['partner', 'history'],
        ['standard', 'forecast'],
      ],
    );
    const standard = await planAll('standard');
    assert.deepEqual(
      standard.plans.map((p) => [p.mode, p.demand!.source]),
      [
        ['standard', 'history'],
        ['standard', 'history'],
        ['standard', 'history'],
        ['standard', 'forecast'],
      ],
    );
    assert.deepEqual(
      standard.plans[1]!.rows.map((r) => r.gross_requirements),
      new Array(8).fill(0),
      "the partner's account has no History a year back for SKU-1",
    );
  });

  it('maps a request mode onto each item-location', () => {
    const [dc, partner] = ITEM_LOCATIONS;
    assert.deepEqual(
      (['partner', 'auto', 'standard'] as const).map((mode) => [plannedMode(mode, dc!), plannedMode(mode, partner!)]),
      [
        ['partner', 'partner'],
        ['standard', 'partner'],
        ['standard', 'standard'],
      ],
    );
  });
});
