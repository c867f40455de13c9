import assert from 'node:assert/strict';
import { bucketsFromCalendar } from './buckets';
import { financialPlan } from './financial';
import { planItemLocation } from './plan';

const WEEKS = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 8 });
const PRICES = { unit_cost: 4, unit_price: 10 };

function columns<T extends object>(rows: T[], keys: (keyof T)[]): unknown[][] {
  return rows.map((row) => keys.map((k) => row[k]));
}

describe('planning/financial', () => {
  const supply = planItemLocation({
    period_starts: WEEKS,
    gross_requirements: [20, 30, 40, 10, 60, 0, 30, 20],
    scheduled_receipts: [0, 20, 0, 0, 0, 0, 0, 0],
    on_hand: 50,
    parameters: { lead_time: 1 },
  });

  it('values a fully supplied plan: revenue, cost of goods, margin, spend at receipt, inventory', () => {
    const plan = financialPlan(supply, PRICES);
    assert.equal(plan.spend_timing, 'receipt');
    assert.deepEqual(
      columns(plan.rows, ['satisfied_demand', 'revenue', 'cost_of_goods', 'gross_margin', 'purchase_spend', 'inventory_value']),
      [
        // sat  rev  cogs margin spend inv
        [20, 200, 80, 120, 0, 120],
        [30, 300, 120, 180, 0, 80],
        [40, 400, 160, 240, 80, 0],
        [10, 100, 40, 60, 40, 0],
        [60, 600, 240, 360, 240, 0],
        [0, 0, 0, 0, 0, 0],
        [30, 300, 120, 180, 120, 0],
        [20, 200, 80, 120, 80, 0],
      ],
    );
    assert.deepEqual(plan.totals, {
      satisfied_demand: 210,
      revenue: 2100,
      cost_of_goods: 840,
      gross_margin: 1260,
      purchase_spend: 560,
      ending_inventory_value: 0,
    });
    assert.equal(plan.rows[0]!.period_start, '2025-01-06');
  });

  it('can book purchase spend in the release bucket instead', () => {
    const plan = financialPlan(supply, { ...PRICES, spend_timing: 'release' });
    assert.deepEqual(
      plan.rows.map((r) => r.purchase_spend),
      [0, 80, 40, 240, 0, 120, 80, 0],
    );
    assert.equal(plan.totals.purchase_spend, 560);
  });

  it('limits satisfied demand to available supply and ships the backlog when supply arrives', () => {
    const constrained = planItemLocation({
      period_starts: WEEKS.slice(0, 4),
      gross_requirements: [30, 20, 20, 20],
      on_hand: 10,
      parameters: { lead_time: 2 },
      supply_policy: 'constrained',
    });
    const plan = financialPlan(constrained, PRICES);
    assert.deepEqual(
      columns(plan.rows, ['satisfied_demand', 'revenue', 'cost_of_goods', 'gross_margin', 'purchase_spend', 'inventory_value']),
      [
        [10, 100, 40, 60, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [60, 600, 240, 360, 240, 0],
        [20, 200, 80, 120, 80, 0],
      ],
    );
    assert.equal(plan.totals.satisfied_demand, 90);
  });

  it('rejects negative prices', () => {
    assert.throws(() => financialPlan(supply, { unit_cost: 4, unit_price: -1 }), { field: 'unit_price' });
  });
});
