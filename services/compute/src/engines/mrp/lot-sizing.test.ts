import assert from 'node:assert/strict';
import { economicOrderQuantity, receiptQuantities, resolveLotPolicy, roundUpToMultiple, type DemandProfile } from './lot-sizing';
import type { PlanningParameters } from './parameters';

const monthly100: () => DemandProfile = () => ({ average_demand: 100, buckets_per_year: 12 });

function policy(params: Omit<PlanningParameters, 'lead_time'>, demand = monthly100) {
  return resolveLotPolicy({ lead_time: 0, ...params }, demand);
}

describe('planning/lot-sizing', () => {
  it('computes Wilson EOQ = sqrt(2DS/H)', () => {
    // D = 1200/yr, S = 50, H = 0.25 × 12 = 3  ->  sqrt(40000) = 200
    assert.equal(economicOrderQuantity({ annual_demand: 1200, ordering_cost: 50, holding_cost: 3 }), 200);
    assert.equal(economicOrderQuantity({ annual_demand: 0, ordering_cost: 50, holding_cost: 3 }), 0);
  });

  it('derives EOQ from average demand, buckets per year and the default holding rate', () => {
    const eoq = policy({ lot_sizing_rule: 'economic_order_quantity', ordering_cost: 50, unit_cost: 12 });
    assert.equal(eoq.economic_order_qty, 200);
    const explicitRate = policy({ lot_sizing_rule: 'economic_order_quantity', ordering_cost: 50, unit_cost: 12, holding_rate: 0.75 });
    // H = 9  ->  sqrt(2·1200·50/9) = 115.47
    assert.ok(Math.abs(explicitRate.economic_order_qty - Math.sqrt(120000 / 9)) < 1e-9);
  });

  it('derives POQ periods as round(EOQ / average demand), at least 1, unless given', () => {
    assert.equal(policy({ lot_sizing_rule: 'period_order_quantity', ordering_cost: 50, unit_cost: 12 }).periods_of_supply, 2);
    assert.equal(policy({ lot_sizing_rule: 'period_order_quantity', ordering_cost: 0.01, unit_cost: 12 }).periods_of_supply, 1);
    const noDemand = () => ({ average_demand: 0, buckets_per_year: 52 });
    assert.equal(policy({ lot_sizing_rule: 'period_order_quantity', ordering_cost: 50, unit_cost: 12 }, noDemand).periods_of_supply, 1);
    let demandRead = false;
    const explicit = policy({ lot_sizing_rule: 'period_order_quantity', periods_of_supply: 4 }, () => {
      demandRead = true;
      return monthly100();
    });
    assert.equal(explicit.periods_of_supply, 4);
    assert.equal(demandRead, false, 'explicit periods need no demand profile');
  });

  it('rounds up to the multiple, ignoring float noise just above one', () => {
    assert.equal(roundUpToMultiple(31, 10), 40);
    assert.equal(roundUpToMultiple(40, 10), 40);
    assert.equal(roundUpToMultiple(0.1 + 0.2, 0.1), 0.30000000000000004);
    assert.equal(roundUpToMultiple(7, 0), 7);
  });

  it('lists split receipts as full receipts then the remainder', () => {
    const p = policy({ min_order_qty: 30, order_multiple: 10, max_order_qty: 100 });
    assert.equal(p.split_qty, 100);
    assert.equal(p.min_valid_qty, 30);
    assert.deepEqual(receiptQuantities(230, 3, p), [100, 100, 30]);
    assert.deepEqual(receiptQuantities(80, 1, p), [80]);
  });

  it('rounds the split size down to the multiple and never below the smallest valid order', () => {
    assert.equal(policy({ order_multiple: 10, max_order_qty: 95 }).split_qty, 90);
    assert.equal(policy({ min_order_qty: 50, max_order_qty: 20 }).split_qty, 50);
    assert.equal(policy({ order_multiple: 12, max_order_qty: 5 }).split_qty, 12);
    assert.equal(policy({}).split_qty, Infinity);
  });

  it('rejects parameters a rule cannot work without', () => {
    assert.throws(() => policy({ lot_sizing_rule: 'fixed_order_quantity' }), { field: 'parameters.fixed_order_qty' });
    assert.throws(() => policy({ lot_sizing_rule: 'economic_order_quantity', ordering_cost: 50 }), {
      field: 'parameters.unit_cost',
    });
    assert.throws(() => policy({ lot_sizing_rule: 'economic_order_quantity', unit_cost: 5 }), {
      field: 'parameters.ordering_cost',
    });
    assert.throws(() => policy({ lot_sizing_rule: 'period_order_quantity', periods_of_supply: 0 }), {
      field: 'parameters.periods_of_supply',
    });
    assert.throws(() => policy({ lot_sizing_rule: 'max_max' as 'lot_for_lot' }), { field: 'parameters.lot_sizing_rule' });
    assert.throws(() => policy({ min_order_qty: -1 }), { field: 'parameters.min_order_qty' });
  });
});
