import assert from 'node:assert/strict';
import { bucketsFromCalendar } from './buckets';
import type { PlanningParameters } from './parameters';
import { planItemLocation, type PlanResult } from './plan';
import type { SupplyPolicy } from './modes';

/** One MRP record row: gross, scheduled, projected available, net, planned receipts, planned releases. */
type RecordRow = [number, number, number, number, number, number];

const weeks = (count: number) => bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count });

function plan(
  gross: number[],
  onHand: number,
  parameters: PlanningParameters,
  extra: { scheduled?: number[]; supply_policy?: SupplyPolicy; period_starts?: string[]; buckets_per_year?: number } = {},
): PlanResult {
  return planItemLocation({
    period_starts: extra.period_starts ?? weeks(gross.length),
    gross_requirements: gross,
    scheduled_receipts: extra.scheduled,
    on_hand: onHand,
    parameters,
    supply_policy: extra.supply_policy,
    buckets_per_year: extra.buckets_per_year,
  });
}

function assertRecord(result: PlanResult, expected: RecordRow[]): void {
  const actual = result
    .rows()
    .map((r): RecordRow => [
      r.gross_requirements,
      r.scheduled_receipts,
      r.projected_available,
      r.net_requirements,
      r.planned_receipts,
      r.planned_releases,
    ]);
  assert.deepEqual(actual, expected);
}

// Shared textbook item: 50 on hand, 20 scheduled in week 1, one-week lead time.
const GROSS = [20, 30, 40, 10, 60, 0, 30, 20];
const SCHEDULED = [0, 20, 0, 0, 0, 0, 0, 0];

describe('planning/netting worked examples', () => {
  it('lot-for-lot with a scheduled receipt and a one-bucket lead time', () => {
    const result = plan(GROSS, 50, { lead_time: 1 }, { scheduled: SCHEDULED });
    assertRecord(result, [
      //GR  SR  PA  NR  PR  PL
      [20, 0, 30, 0, 0, 0],
      [30, 20, 20, 0, 0, 20],
      [40, 0, 0, 20, 20, 10],
      [10, 0, 0, 10, 10, 60],
      [60, 0, 0, 60, 60, 0],
      [0, 0, 0, 0, 0, 30],
      [30, 0, 0, 30, 30, 20],
      [20, 0, 0, 20, 20, 0],
    ]);
    assert.deepEqual(result.exceptions, []);
    assert.equal(result.rows()[0]!.period_start, '2025-01-06');
  });

  it('fixed order quantity orders whole lots of 50', () => {
    const result = plan(
      GROSS,
      50,
      { lead_time: 1, lot_sizing_rule: 'fixed_order_quantity', fixed_order_qty: 50 },
      {
        scheduled: SCHEDULED,
      },
    );
    assertRecord(result, [
      [20, 0, 30, 0, 0, 0],
      [30, 20, 20, 0, 0, 50],
      [40, 0, 30, 20, 50, 0],
      [10, 0, 20, 0, 0, 50],
      [60, 0, 10, 40, 50, 0],
      [0, 0, 10, 0, 0, 50],
      [30, 0, 30, 20, 50, 0],
      [20, 0, 10, 0, 0, 0],
    ]);
  });

  // 12 monthly buckets averaging 100: D = 1200/yr, S = 50, H = 0.25 × 12 = 3, EOQ = 200, POQ = 2 periods.
  const MONTHS = bucketsFromCalendar({ start: '2025-01-01', bucket: 'month', count: 12 });
  const MONTHLY_GROSS = [80, 120, 100, 60, 140, 100, 90, 110, 100, 100, 150, 50];
  const COSTS = { ordering_cost: 50, unit_cost: 12 };

  it('economic order quantity orders max(net, EOQ = 200), released a month ahead', () => {
    const result = plan(
      MONTHLY_GROSS,
      100,
      { lead_time: 1, lot_sizing_rule: 'economic_order_quantity', ...COSTS },
      {
        period_starts: MONTHS,
      },
    );
    assert.equal(result.lot_policy.economic_order_qty, 200);
    assertRecord(result, [
      [80, 0, 20, 0, 0, 200],
      [120, 0, 100, 100, 200, 0],
      [100, 0, 0, 0, 0, 200],
      [60, 0, 140, 60, 200, 0],
      [140, 0, 0, 0, 0, 200],
      [100, 0, 100, 100, 200, 0],
      [90, 0, 10, 0, 0, 200],
      [110, 0, 100, 100, 200, 0],
      [100, 0, 0, 0, 0, 200],
      [100, 0, 100, 100, 200, 200],
      [150, 0, 150, 50, 200, 0],
      [50, 0, 100, 0, 0, 0],
    ]);
    assert.equal(result.toJSON().economic_order_qty, 200);
  });

  it('fixed order quantity orders several whole lots when the net requirement exceeds one', () => {
    const result = plan([60, 10], 0, { lead_time: 0, lot_sizing_rule: 'fixed_order_quantity', fixed_order_qty: 25 });
    assertRecord(result, [
      [60, 0, 15, 60, 75, 75],
      [10, 0, 5, 0, 0, 0],
    ]);
  });

  it('economic order quantity orders the net requirement in full when it exceeds EOQ', () => {
    const result = plan(
      [260, 0],
      0,
      { lead_time: 0, lot_sizing_rule: 'economic_order_quantity', ...COSTS, unit_cost: 1200 },
      {
        buckets_per_year: 12,
      },
    );
    // Average 130/month: D = 1560, H = 300, EOQ = sqrt(2·1560·50/300) = 22.8 < 260.
    assert.ok(result.lot_policy.economic_order_qty < 260);
    assertRecord(result, [
      [260, 0, 0, 260, 260, 260],
      [0, 0, 0, 0, 0, 0],
    ]);
  });

  it('period order quantity covers round(EOQ / avg) = 2 months per order', () => {
    const result = plan(
      MONTHLY_GROSS,
      100,
      { lead_time: 0, lot_sizing_rule: 'period_order_quantity', ...COSTS },
      {
        period_starts: MONTHS,
      },
    );
    assert.equal(result.lot_policy.periods_of_supply, 2);
    assertRecord(result, [
      [80, 0, 20, 0, 0, 0],
      [120, 0, 100, 100, 200, 200],
      [100, 0, 0, 0, 0, 0],
      [60, 0, 140, 60, 200, 200],
      [140, 0, 0, 0, 0, 0],
      [100, 0, 90, 100, 190, 190],
      [90, 0, 0, 0, 0, 0],
      [110, 0, 100, 110, 210, 210],
      [100, 0, 0, 0, 0, 0],
      [100, 0, 150, 100, 250, 250],
      [150, 0, 0, 0, 0, 0],
      [50, 0, 0, 50, 50, 50],
    ]);
  });

  it('period order quantity with explicit 3 periods of supply', () => {
    const result = plan(
      GROSS,
      50,
      { lead_time: 1, lot_sizing_rule: 'period_order_quantity', periods_of_supply: 3 },
      {
        scheduled: SCHEDULED,
      },
    );
    assertRecord(result, [
      [20, 0, 30, 0, 0, 0],
      [30, 20, 20, 0, 0, 90],
      [40, 0, 70, 20, 90, 0],
      [10, 0, 60, 0, 0, 0],
      [60, 0, 0, 0, 0, 0],
      [0, 0, 0, 0, 0, 50],
      [30, 0, 20, 30, 50, 0],
      [20, 0, 0, 0, 0, 0],
    ]);
  });

  it('period order quantity sizes to the deepest dip, not the window end, when a receipt lands inside', () => {
    const result = plan(
      [0, 50, 0, 0],
      0,
      { lead_time: 0, lot_sizing_rule: 'period_order_quantity', periods_of_supply: 3 },
      {
        scheduled: [0, 0, 40, 0],
      },
    );
    assertRecord(result, [
      [0, 0, 0, 0, 0, 0],
      [50, 0, 0, 50, 50, 50],
      [0, 40, 40, 0, 0, 0],
      [0, 0, 40, 0, 0, 0],
    ]);
  });

  it('lead time offset with safety stock: projected available held at 20', () => {
    const result = plan([30, 30, 30, 30, 30, 30], 100, { lead_time: 2, safety_stock: 20 });
    assertRecord(result, [
      [30, 0, 70, 0, 0, 10],
      [30, 0, 40, 0, 0, 30],
      [30, 0, 20, 10, 10, 30],
      [30, 0, 20, 30, 30, 30],
      [30, 0, 20, 30, 30, 0],
      [30, 0, 20, 30, 30, 0],
    ]);
    assert.deepEqual(result.exceptions, []);
  });

  it('raises lots to MOQ 25 and rounds them up to multiples of 10', () => {
    const result = plan([12, 0, 40, 7, 33], 0, { lead_time: 0, min_order_qty: 25, order_multiple: 10 });
    assertRecord(result, [
      [12, 0, 18, 12, 30, 30],
      [0, 0, 18, 0, 0, 0],
      [40, 0, 8, 22, 30, 30],
      [7, 0, 1, 0, 0, 0],
      [33, 0, 8, 32, 40, 40],
    ]);
  });

  it('splits orders above max 100 into several receipts in the same bucket', () => {
    const result = plan([250, 0, 130, 205], 0, { lead_time: 0, min_order_qty: 30, order_multiple: 10, max_order_qty: 100 });
    assertRecord(result, [
      [250, 0, 0, 250, 250, 250],
      [0, 0, 0, 0, 0, 0],
      [130, 0, 0, 130, 130, 130],
      [205, 0, 25, 205, 230, 230],
    ]);
    assert.deepEqual(Array.from(result.receipt_counts!), [3, 0, 2, 3]);
    assert.deepEqual(
      result.plannedOrders().map((o) => [o.receipt_bucket, o.quantity]),
      [
        [0, 100],
        [0, 100],
        [0, 50],
        [2, 100],
        [2, 30],
        [3, 100],
        [3, 100],
        [3, 30],
      ],
    );
  });

  it('unconstrained: keeps receipts whose release is past due and accumulates the releases in bucket 0', () => {
    const result = plan([30, 20, 20, 20], 10, { lead_time: 2 });
    assertRecord(result, [
      [30, 0, 0, 20, 20, 60],
      [20, 0, 0, 20, 20, 20],
      [20, 0, 0, 20, 20, 0],
      [20, 0, 0, 20, 20, 0],
    ]);
    assert.equal(result.past_due_releases, 40);
    assert.deepEqual(result.exceptions, [
      { type: 'release_in_past', bucket: 0, period_start: '2025-01-06', quantity: 20, buckets_past_due: 2 },
      { type: 'release_in_past', bucket: 1, period_start: '2025-01-13', quantity: 20, buckets_past_due: 1 },
    ]);
    assert.deepEqual(
      result.plannedOrders().map((o) => [o.release_bucket, o.release_period, o.past_due]),
      [
        [-2, '2025-01-06', true],
        [-1, '2025-01-06', true],
        [0, '2025-01-06', false],
        [1, '2025-01-13', false],
      ],
    );
  });

  it('constrained: no receipt before the lead time, the backlog is covered at the first plannable bucket', () => {
    const result = plan([30, 20, 20, 20], 10, { lead_time: 2 }, { supply_policy: 'constrained' });
    assertRecord(result, [
      [30, 0, -20, 20, 0, 60],
      [20, 0, -40, 40, 0, 20],
      [20, 0, 0, 60, 60, 0],
      [20, 0, 0, 20, 20, 0],
    ]);
    assert.equal(result.past_due_releases, 0);
    assert.deepEqual(result.exceptions, [
      { type: 'stockout', bucket: 0, period_start: '2025-01-06', quantity: 20 },
      { type: 'stockout', bucket: 1, period_start: '2025-01-13', quantity: 40 },
    ]);
  });

  it('constrained: reports below-safety-stock before a stockout', () => {
    const result = plan([30, 20, 20, 20], 40, { lead_time: 2, safety_stock: 15 }, { supply_policy: 'constrained' });
    assertRecord(result, [
      [30, 0, 10, 5, 0, 45],
      [20, 0, -10, 25, 0, 20],
      [20, 0, 15, 45, 45, 0],
      [20, 0, 15, 20, 20, 0],
    ]);
    assert.deepEqual(
      result.exceptions.map((e) => [e.type, e.bucket, e.quantity]),
      [
        ['below_safety_stock', 0, 5],
        ['stockout', 1, 10],
      ],
    );
  });

  it('a lead time beyond the horizon plans nothing when constrained', () => {
    const result = plan([5, 5], 0, { lead_time: 3 }, { supply_policy: 'constrained' });
    assert.deepEqual(Array.from(result.planned_receipts), [0, 0]);
    assert.deepEqual(Array.from(result.projected_available), [-5, -10]);
  });

  it('nets an opening backorder and scheduled receipts larger than demand', () => {
    const result = plan([10, 10, 10], -15, { lead_time: 0 }, { scheduled: [0, 60, 0] });
    assertRecord(result, [
      [10, 0, 0, 25, 25, 25],
      [10, 60, 50, 0, 0, 0],
      [10, 0, 40, 0, 0, 0],
    ]);
  });

  it('accepts typed arrays and serialises to plain JSON rows', () => {
    const result = planItemLocation({
      period_starts: weeks(2),
      gross_requirements: Float64Array.from([3, 4]),
      on_hand: 0,
      parameters: { lead_time: 0 },
    });
    const json = JSON.parse(JSON.stringify(result));
    assert.deepEqual(json.rows[1], {
      period_start: '2025-01-13',
      gross_requirements: 4,
      scheduled_receipts: 0,
      projected_available: 0,
      net_requirements: 4,
      planned_receipts: 4,
      planned_releases: 4,
    });
    assert.equal(json.planned_orders.length, 2);
  });

  it('rejects malformed input with the field path', () => {
    assert.throws(() => plan([1, -2], 0, { lead_time: 0 }), { field: 'gross_requirements.1' });
    assert.throws(() => plan([1, NaN], 0, { lead_time: 0 }), { field: 'gross_requirements.1' });
    assert.throws(() => plan([1, 2], 0, { lead_time: 1.5 }), { field: 'parameters.lead_time' });
    assert.throws(() => plan([1, 2], 0, { lead_time: 0 }, { scheduled: [1] }), { field: 'scheduled_receipts' });
    assert.throws(() => plan([1, 2], 0, { lead_time: 0 }, { period_starts: weeks(3) }), { field: 'gross_requirements' });
    assert.throws(() => plan([1], 0, { lead_time: 0 }, { supply_policy: 'infinite' as SupplyPolicy }), {
      field: 'supply_policy',
    });
  });
});
