import assert from 'node:assert/strict';
import type { supply_reference_v1 as ref } from '@supply/contracts';
import { bucketsFromCalendar, planItemLocation, PlanningInputError } from '../engines/mrp';
import { BucketClock } from './calendar';
import {
  DemandOwnership,
  engineParameters,
  groupDemand,
  partnerPlanInput,
  partnerSellThrough,
  standardDemand,
  standardPlanInput,
  standardSource,
  type SalesPoint,
} from './inputs';

const history = (customer_group_id: number, sell_date: string, quantity: number): SalesPoint => ({
  customer_group_id,
  sale_type: 'history',
  sell_date,
  quantity,
});
const forecast = (customer_group_id: number, sell_date: string, quantity: number): SalesPoint => ({
  customer_group_id,
  sale_type: 'forecast',
  sell_date,
  quantity,
});

function itemLocation(overrides: Partial<ref.ItemLocation> = {}): ref.ItemLocation {
  return {
    id: 1,
    item_id: 1,
    item_name: 'SKU-0001',
    location_id: 4,
    location_name: 'Partner-Mart',
    lead_time: 1,
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
    partner: true,
    created_at: '',
    updated_at: '',
    ...overrides,
  };
}

describe('supply planning: calendar clock', () => {
  it('numbers weekly buckets from plan start, negative before it', () => {
    const clock = new BucketClock('week', ['2025-01-06', '2025-01-13']);
    assert.equal(clock.indexOf('2025-01-06'), 0);
    assert.equal(clock.indexOf('2025-01-12'), 0);
    assert.equal(clock.indexOf('2025-01-19'), 1);
    assert.equal(clock.indexOf('2025-01-05'), -1);
    assert.equal(clock.indexOf('2024-01-08'), -52, 'the same week a year earlier');
    assert.equal(clock.startOf(-13), '2024-10-07');
    assert.equal(clock.endOf(-1), '2025-01-05');
    assert.equal(clock.endOf(1), '2025-01-19');
  });

  it('numbers monthly and daily buckets', () => {
    const months = new BucketClock('month', ['2025-01-01', '2025-02-01', '2025-03-01']);
    assert.equal(months.indexOf('2024-02-15'), -11);
    assert.equal(months.indexOf('2025-03-31'), 2);
    assert.equal(months.startOf(-3), '2024-10-01');
    assert.equal(months.endOf(-1), '2024-12-31');
    assert.deepEqual([months.yearShift, months.sellThroughWindow], [12, 3]);
    const days = new BucketClock('day', ['2025-01-06']);
    assert.equal(days.indexOf('2025-01-05'), -1);
    assert.equal(days.indexOf('2024-01-08'), -364);
    assert.deepEqual([days.yearShift, days.sellThroughWindow], [364, 91]);
  });

  it('refuses a bucket size the engine does not know', () => {
    assert.throws(
      () => new BucketClock('year', ['2025-01-01']),
      (err: unknown) => err instanceof PlanningInputError && err.field === 'calendar.bucket',
    );
  });
});

describe('supply planning: demand mapping', () => {
  const clock = new BucketClock('week', bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 4 }));
  const records: SalesPoint[] = [
    history(1, '2024-01-08', 10), // a year before bucket 0
    history(1, '2024-01-15', 7), // bucket 1 a year earlier, two records in the week
    history(1, '2024-01-17', 5),
    history(1, '2024-01-22', 20),
    history(1, '2024-01-29', 30),
    forecast(1, '2025-01-13', 0), // a zero forecast is still a forecast
    forecast(1, '2025-01-22', 40),
    forecast(1, '2025-02-03', 99), // after the horizon
    history(1, '2024-12-30', 3), // the week before plan start: sell-through only
    history(1, '2024-10-07', 4), // 13 weeks before plan start: first sell-through bucket
    history(1, '2024-09-30', 1000), // outside every window
    history(2, '2024-01-08', 6),
  ];
  const byGroup = groupDemand(clock, records);

  it('places Forecast on its bucket, History a year later, and the 13 weeks before start as sell-through', () => {
    const g1 = byGroup.get(1)!;
    assert.deepEqual([...g1.forecast], [0, 0, 40, 0]);
    assert.deepEqual([...g1.hasForecast], [0, 1, 1, 0]);
    assert.deepEqual([...g1.lastYear], [10, 12, 20, 30]);
    assert.equal(g1.sellThrough.length, 13);
    assert.equal(g1.sellThrough[0], 4);
    assert.equal(g1.sellThrough[12], 3);
    assert.equal(
      g1.sellThrough.reduce((a, b) => a + b, 0),
      7,
    );
  });

  it('takes the Forecast where one exists in the bucket and History a year earlier elsewhere, per customer group', () => {
    const alone = standardDemand(4, byGroup, { customer_group_ids: [1], customer_group_names: ['Retail'], share: 1, own_group: null });
    assert.deepEqual([...alone.gross], [10, 0, 40, 30]);
    assert.deepEqual([alone.forecast_buckets, alone.history_buckets, alone.mixed_buckets], [2, 2, 0]);

    const shared = standardDemand(4, byGroup, {
      customer_group_ids: [1, 2, 3],
      customer_group_names: ['Retail', 'Online', 'Empty'],
      share: 0.5,
      own_group: null,
    });
    assert.deepEqual([...shared.gross], [(10 + 6) / 2, 0, 40 / 2, 30 / 2]);
    assert.deepEqual([shared.forecast_buckets, shared.history_buckets, shared.mixed_buckets], [0, 2, 2]);
  });

  it('gives a location its own customer group (named after it), and the other locations equal shares of the rest', () => {
    const ownership = new DemandOwnership(
      [
        { id: 1, name: 'Retail' },
        { id: 2, name: 'partner-mart' },
        { id: 3, name: 'Online' },
      ],
      ['DC-East', 'DC-West', 'Partner-Mart'],
    );
    assert.deepEqual(ownership.attribute('PARTNER-MART', 3), {
      customer_group_ids: [2],
      customer_group_names: ['partner-mart'],
      share: 1,
      own_group: { id: 2, name: 'partner-mart' },
    });
    assert.deepEqual(ownership.attribute('DC-East', 2), {
      customer_group_ids: [1, 3],
      customer_group_names: ['Retail', 'Online'],
      share: 0.5,
      own_group: null,
    });
    assert.equal(ownership.sharesDemand('DC-West'), true);
    assert.equal(ownership.sharesDemand('Partner-Mart'), false);
  });

  it('finds no partner sell-through without an own customer group, or without a record of it in the window', () => {
    const noGroup = new DemandOwnership([{ id: 1, name: 'Retail' }], ['Partner-Mart']).attribute('Partner-Mart', 1);
    assert.equal(partnerSellThrough(byGroup, noGroup), null);
    // Group 2 has History a year back only: nothing reported in the 13 weeks before plan start.
    const silent = new DemandOwnership([{ id: 2, name: 'Partner-Mart' }], ['Partner-Mart']).attribute('Partner-Mart', 1);
    assert.equal(partnerSellThrough(byGroup, silent), null);
    // A reported zero is sell-through all the same.
    const zero = groupDemand(clock, [history(2, '2024-12-30', 0)]);
    assert.deepEqual([...partnerSellThrough(zero, silent)!], new Array(13).fill(0));
    const reporting = new DemandOwnership([{ id: 1, name: 'Partner-Mart' }], ['Partner-Mart']).attribute('Partner-Mart', 1);
    assert.equal(partnerSellThrough(byGroup, reporting), byGroup.get(1)!.sellThrough);
    assert.equal(byGroup.get(1)!.sellThroughRecords, 2);
  });

  it('names the source of forecast-else-history demand: forecast when any bucket uses one, else history', () => {
    const one = (id: number) => ({ customer_group_ids: [id], customer_group_names: [], share: 1, own_group: null });
    assert.equal(standardSource(standardDemand(4, byGroup, one(1))), 'forecast');
    assert.equal(standardSource(standardDemand(4, byGroup, one(2))), 'history');
    assert.equal(standardSource(standardDemand(4, byGroup, one(9))), 'history', 'no sales at all: history, which is none');
    assert.equal(standardSource(standardDemand(4, byGroup, { ...one(1), customer_group_ids: [1, 2] })), 'forecast', 'mixed buckets');
  });

  it('plans a partner from its average sell-through and on-hand, where standard follows forecast and last year', () => {
    const ownership = new DemandOwnership(
      [
        { id: 1, name: 'Partner-Mart' },
        { id: 2, name: 'Retail' },
      ],
      ['Partner-Mart', 'DC-East'],
    );
    const attribution = ownership.attribute('Partner-Mart', 1);
    const context = { clock, supply_policy: 'unconstrained' as const, itemLocation: itemLocation(), on_hand: 5 };
    const sellThrough = partnerSellThrough(byGroup, attribution)!;
    const partner = planItemLocation(partnerPlanInput(context, sellThrough));
    // 7 units sold over the 13 weeks before plan start: the partner's rate of sale, every week.
    assert.deepEqual(Array.from(partner.gross_requirements), [7 / 13, 7 / 13, 7 / 13, 7 / 13]);
    assert.equal(partner.mode, 'partner');
    assert.equal(partner.on_hand, 5);

    const standard = planItemLocation(standardPlanInput(context, standardDemand(4, byGroup, attribution)));
    assert.deepEqual(Array.from(standard.gross_requirements), [10, 0, 40, 30]);
    // Lot-for-lot, lead time 1: 5 on hand covers bucket 0 only in partner mode; standard needs 5 more at once.
    assert.equal(partner.planned_receipts[0], 0);
    assert.equal(standard.planned_receipts[0], 5);
    assert.equal(
      standard.exceptions.some((e) => e.type === 'release_in_past'),
      true,
    );
  });

  it('maps reference parameters onto the engine, 0 meaning none', () => {
    assert.deepEqual(
      engineParameters(
        itemLocation({ lot_sizing_rule: 'period_order_quantity', ordering_cost: 50, periods_of_supply: 0, max_order_qty: 0 }),
      ),
      {
        lead_time: 1,
        safety_stock: 0,
        min_order_qty: 0,
        order_multiple: 0,
        max_order_qty: 0,
        lot_sizing_rule: 'period_order_quantity',
        fixed_order_qty: undefined,
        ordering_cost: 50,
        holding_rate: 0.25,
        unit_cost: 2,
        periods_of_supply: undefined,
      },
    );
    assert.throws(
      () =>
        planItemLocation(
          standardPlanInput(
            { clock, supply_policy: 'unconstrained', itemLocation: itemLocation({ lot_sizing_rule: 'fixed_order_quantity' }), on_hand: 0 },
            standardDemand(4, byGroup, { customer_group_ids: [1], customer_group_names: [], share: 1, own_group: null }),
          ),
        ),
      (err: unknown) => err instanceof PlanningInputError && err.field === 'parameters.fixed_order_qty',
    );
  });
});
