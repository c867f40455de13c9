import assert from 'node:assert/strict';
import { bucketsFromCalendar } from './buckets';
import { financialPlan } from './financial';
import { LOT_SIZING_RULES, QTY_EPSILON, periodOrderQuantity, type LotPolicy } from './lot-sizing';
import type { SupplyPolicy } from './modes';
import type { PlanningParameters } from './parameters';
import { planItemLocation, type PlanException, type PlanResult, type StandardPlanInput } from './index';
import { SeededRandom } from './prng';

const CASES = 3000;
const ALL_WEEKS = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 80 });

/** Relative tolerance: lots are built by float arithmetic on arbitrary fractional demand. */
function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-7 * Math.max(1, Math.abs(a), Math.abs(b));
}

function isMultiple(qty: number, multiple: number): boolean {
  const k = qty / multiple;
  return Math.abs(k - Math.round(k)) <= 1e-6;
}

/** A random but valid item-location: intermittent or steady demand, any rule, any modifiers. */
function randomInput(rng: SeededRandom, supplyPolicy: SupplyPolicy): StandardPlanInput {
  const buckets = rng.int(1, ALL_WEEKS.length);
  const level = rng.pick([0.5, 5, 40, 300, 2500]);
  const intermittency = rng.pick([0, 0.3, 0.8]);
  const fractional = rng.chance(0.5);
  const gross = new Array<number>(buckets);
  for (let t = 0; t < buckets; t++) {
    const q = rng.chance(intermittency) ? 0 : rng.range(0, 2 * level);
    gross[t] = fractional ? q : Math.round(q);
  }
  const scheduled = rng.chance(0.4) ? gross.map(() => (rng.chance(0.15) ? Math.round(rng.range(0, 3 * level)) : 0)) : undefined;
  const parameters: PlanningParameters = {
    lead_time: rng.int(0, buckets - 1),
    safety_stock: rng.chance(0.6) ? rng.range(0, 2 * level) : 0,
    lot_sizing_rule: rng.pick(LOT_SIZING_RULES),
    fixed_order_qty: rng.range(0.5, 5 * level),
    ordering_cost: rng.range(0, 500),
    unit_cost: rng.range(0.1, 80),
    holding_rate: rng.chance(0.5) ? undefined : rng.range(0.05, 0.6),
    periods_of_supply: rng.chance(0.5) ? rng.int(1, 8) : undefined,
    min_order_qty: rng.chance(0.4) ? rng.range(0, 3 * level) : undefined,
    order_multiple: rng.chance(0.4) ? rng.pick([1, 6, 12, 2.5, 0.25, 100]) : undefined,
    max_order_qty: rng.chance(0.3) ? rng.range(0, 6 * level) : undefined,
  };
  return {
    period_starts: ALL_WEEKS.slice(0, buckets),
    gross_requirements: gross,
    scheduled_receipts: scheduled,
    on_hand: rng.chance(0.1) ? -rng.range(0, level) : rng.range(0, 4 * level),
    parameters,
    supply_policy: supplyPolicy,
  };
}

/** Demand in the buckets before `buckets`, which only on-hand and scheduled receipts can cover. */
function demandWithin(input: StandardPlanInput, buckets: number): number {
  let sum = 0;
  for (let t = 0; t < buckets; t++) sum += input.gross_requirements[t]!;
  return sum;
}

function forEachCase(seed: number, supplyPolicy: SupplyPolicy, check: (input: StandardPlanInput, plan: PlanResult) => void) {
  const rng = new SeededRandom(seed);
  for (let i = 0; i < CASES; i++) {
    const input = randomInput(rng, supplyPolicy);
    const plan = planItemLocation(input);
    try {
      check(input, plan);
    } catch (e) {
      (e as Error).message = `seed ${seed} case ${i}: ${(e as Error).message}\n${JSON.stringify(input)}`;
      throw e;
    }
  }
}

/**
 * The netting recurrence as written (README): each rounding is `Math.ceil(x / q - QTY_EPSILON) * q`,
 * nothing hoisted or estimated. The engine's shortcuts must give these values bit for bit.
 */
function referenceNetting(
  input: StandardPlanInput,
  policy: LotPolicy,
): { projected: number[]; receipts: number[]; counts: number[]; exceptions: PlanException[] } {
  const gross = input.gross_requirements;
  const scheduled = input.scheduled_receipts;
  const n = input.period_starts.length;
  const ss = input.parameters.safety_stock ?? 0;
  const lead = input.parameters.lead_time;
  const first = input.supply_policy === 'constrained' ? Math.min(lead, n) : 0;
  const tolerance = QTY_EPSILON * Math.max(1, ss, Math.abs(input.on_hand));
  const projected: number[] = [];
  const receipts: number[] = [];
  const counts: number[] = [];
  const exceptions: PlanException[] = [];
  const starts = input.period_starts;
  let balance = input.on_hand;
  for (let t = 0; t < n; t++) {
    balance += (scheduled === undefined ? 0 : scheduled[t]!) - gross[t]!;
    const shortfall = ss - balance;
    let lot = 0;
    let count = 0;
    if (shortfall > tolerance && t >= first) {
      lot = shortfall;
      if (policy.lot_sizing_rule === 'fixed_order_quantity')
        lot = Math.ceil(shortfall / policy.fixed_order_qty - QTY_EPSILON) * policy.fixed_order_qty;
      else if (policy.lot_sizing_rule === 'period_order_quantity')
        lot = periodOrderQuantity(gross, scheduled, t, balance, ss, policy.periods_of_supply);
      else if (policy.lot_sizing_rule === 'economic_order_quantity') lot = Math.max(lot, policy.economic_order_qty);
      if (lot < policy.min_order_qty) lot = policy.min_order_qty;
      if (policy.order_multiple > 0) lot = Math.ceil(lot / policy.order_multiple - QTY_EPSILON) * policy.order_multiple;
      if (policy.split_qty !== Infinity) {
        count = lot > policy.split_qty ? Math.ceil(lot / policy.split_qty - QTY_EPSILON) : 1;
        const remainder = lot - (count - 1) * policy.split_qty;
        if (remainder < policy.min_valid_qty) lot += policy.min_valid_qty - remainder;
      }
      balance = ss + (lot - shortfall);
      if (t < lead)
        exceptions.push({ type: 'release_in_past', bucket: t, period_start: starts[t]!, quantity: lot, buckets_past_due: lead - t });
    }
    if (ss - balance > tolerance) {
      exceptions.push(
        balance < -tolerance
          ? { type: 'stockout', bucket: t, period_start: starts[t]!, quantity: -balance }
          : { type: 'below_safety_stock', bucket: t, period_start: starts[t]!, quantity: ss - balance },
      );
    }
    projected.push(balance);
    receipts.push(lot);
    counts.push(count);
  }
  return { projected, receipts, counts, exceptions };
}

/** Inputs at the edges of the rounding shortcuts: lots far above or below the shortfall, fractional multiples, large magnitudes. */
function edgeInput(rng: SeededRandom): StandardPlanInput {
  const input = randomInput(rng, rng.chance(0.3) ? 'constrained' : 'unconstrained');
  const scale = rng.pick([1e-6, 1e-3, 1, 1e6, 1e12]);
  const gross = Array.from(input.gross_requirements, (q) => q * scale);
  const parameters: PlanningParameters = {
    ...input.parameters,
    safety_stock: (input.parameters.safety_stock ?? 0) * scale,
    fixed_order_qty: rng.pick([1e-9, 1e-3, 0.1, 0.3, 1, 7, 1e3, 1e9, 1e15]) * rng.pick([1, scale]),
    order_multiple: rng.chance(0.7) ? rng.pick([0.1, 0.3, 0.7, 1e-3, 1e-9, 3, 1e4, 1e9]) * rng.pick([1, scale]) : undefined,
    min_order_qty: input.parameters.min_order_qty === undefined ? undefined : input.parameters.min_order_qty * scale,
    max_order_qty: input.parameters.max_order_qty === undefined ? undefined : input.parameters.max_order_qty * scale,
  };
  return { ...input, gross_requirements: gross, on_hand: input.on_hand * scale, parameters };
}

/** Whole quantities (units, cases), some scaled up to large counts, some on-hand negative or -0. */
function integerInput(rng: SeededRandom): StandardPlanInput {
  const input = randomInput(rng, rng.chance(0.3) ? 'constrained' : 'unconstrained');
  const scale = rng.pick([1, 1, 1, 100, 1000]);
  const whole = (q: number | undefined) => (q === undefined ? undefined : Math.round(q * scale));
  const p = input.parameters;
  const onHand = rng.chance(0.05) ? -0 : Math.round(input.on_hand * scale);
  return {
    ...input,
    gross_requirements: Array.from(input.gross_requirements, (q) => Math.round(q * scale)),
    scheduled_receipts:
      input.scheduled_receipts === undefined ? undefined : Array.from(input.scheduled_receipts, (q) => Math.round(q * scale)),
    on_hand: onHand,
    parameters: {
      ...p,
      lot_sizing_rule: rng.pick(['lot_for_lot', 'economic_order_quantity', p.lot_sizing_rule ?? 'lot_for_lot']),
      safety_stock: whole(p.safety_stock),
      fixed_order_qty: Math.max(1, Math.round(p.fixed_order_qty! * scale)),
      min_order_qty: whole(p.min_order_qty),
      order_multiple: p.order_multiple === undefined ? undefined : rng.pick([1, 6, 12, 100, 7919]),
      max_order_qty: whole(p.max_order_qty),
    },
  };
}

describe('planning/properties (seeded random item-locations)', () => {
  it('netting gives the textbook recurrence bit for bit (projected available, receipts, counts, exceptions), also at rounding edges and on whole quantities', () => {
    const rng = new SeededRandom(11);
    const edges = new SeededRandom(12);
    const wholes = new SeededRandom(13);
    for (let i = 0; i < 3 * CASES; i++) {
      const input =
        i % 3 === 0
          ? randomInput(rng, i % 2 === 0 ? 'constrained' : 'unconstrained')
          : i % 3 === 1
            ? edgeInput(edges)
            : integerInput(wholes);
      const plan = planItemLocation(input);
      const expected = referenceNetting(input, plan.lot_policy);
      assert.deepEqual(plan.exceptions, expected.exceptions, `case ${i}: exceptions`);
      for (let t = 0; t < input.period_starts.length; t++) {
        const same =
          Object.is(plan.projected_available[t], expected.projected[t]) &&
          Object.is(plan.planned_receipts[t], expected.receipts[t]) &&
          (plan.receipt_counts === null || plan.receipt_counts[t] === expected.counts[t]);
        if (!same) {
          assert.fail(
            `case ${i} bucket ${t}: projected ${plan.projected_available[t]} vs ${expected.projected[t]}, receipt ${plan.planned_receipts[t]} vs ${expected.receipts[t]}, count ${plan.receipt_counts?.[t]} vs ${expected.counts[t]}; ${JSON.stringify(input)}`,
          );
        }
      }
    }
  });

  it('series derived on read (net requirements, releases) agree with rows() and with their definitions', () => {
    for (const [seed, policy] of [
      [7, 'unconstrained'],
      [8, 'constrained'],
    ] as const) {
      forEachCase(seed, policy, (input, plan) => {
        const n = input.period_starts.length;
        const lead = input.parameters.lead_time;
        const ss = input.parameters.safety_stock ?? 0;
        const rows = plan.rows();
        const json = plan.toJSON();
        let previous = input.on_hand;
        let pastDue = 0;
        for (let t = 0; t < n; t++) {
          const row = rows[t]!;
          assert.ok(Object.is(row.net_requirements, plan.net_requirements[t]), `net bucket ${t}`);
          assert.ok(Object.is(row.planned_releases, plan.planned_releases[t]), `release bucket ${t}`);
          assert.ok(Object.is(row.projected_available, plan.projected_available[t]));
          assert.ok(Object.is(row.planned_receipts, plan.planned_receipts[t]));
          assert.ok(Object.is(row.scheduled_receipts, plan.scheduled_receipts[t]));
          assert.deepEqual(json.rows[t], row);
          const before = previous + (input.scheduled_receipts?.[t] ?? 0) - input.gross_requirements[t]!;
          const expectedNet = ss - before > 1e-9 * Math.max(1, ss, Math.abs(input.on_hand)) ? ss - before : 0;
          assert.ok(near(plan.net_requirements[t]!, expectedNet), `net bucket ${t}: ${plan.net_requirements[t]} vs ${expectedNet}`);
          if (plan.planned_receipts[t]! > 0) assert.ok(plan.net_requirements[t]! > 0, `receipt without net requirement at ${t}`);
          if (t <= lead) pastDue += plan.planned_receipts[t]!;
          else assert.equal(plan.planned_releases[t - lead], plan.planned_receipts[t]);
          previous = plan.projected_available[t]!;
        }
        assert.ok(near(plan.planned_releases[0]!, pastDue), `bucket 0 releases ${plan.planned_releases[0]} vs ${pastDue}`);
        for (let t = Math.max(1, n - lead); t < n; t++) assert.equal(plan.planned_releases[t], 0);
      });
    }
  });

  it('unconstrained: projected available never drops below safety stock, and nothing is past due when on-hand covers the lead time', () => {
    let covered = 0;
    forEachCase(1, 'unconstrained', (input, plan) => {
      const ss = input.parameters.safety_stock ?? 0;
      plan.projected_available.forEach((pa, t) => assert.ok(pa >= ss || near(pa, ss), `bucket ${t}: ${pa} < ${ss}`));
      assert.ok(plan.exceptions.every((e) => e.type === 'release_in_past'));
      if (input.on_hand >= ss + demandWithin(input, input.parameters.lead_time)) {
        covered++;
        assert.deepEqual(plan.exceptions, []);
      }
    });
    assert.ok(covered > CASES / 20, `only ${covered} cases without past-due releases`);
  });

  it('constrained: safety stock holds from the first plannable bucket, and everywhere when on-hand covers the lead time', () => {
    forEachCase(2, 'constrained', (input, plan) => {
      const ss = input.parameters.safety_stock ?? 0;
      const leadTime = input.parameters.lead_time;
      const coveredFromStart = input.on_hand >= ss + demandWithin(input, leadTime);
      plan.projected_available.forEach((pa, t) => {
        if (t >= leadTime || coveredFromStart) assert.ok(pa >= ss || near(pa, ss), `bucket ${t}: ${pa} < ${ss}`);
      });
      assert.equal(plan.past_due_releases, 0);
      assert.ok(plan.exceptions.every((e) => e.type !== 'release_in_past' && e.bucket < leadTime));
    });
  });

  for (const supplyPolicy of ['unconstrained', 'constrained'] as const) {
    it(`${supplyPolicy}: every planned receipt honours MOQ, the order multiple and the maximum`, () => {
      forEachCase(3, supplyPolicy, (input, plan) => {
        const { min_order_qty: moq = 0, order_multiple: multiple = 0 } = input.parameters;
        for (const order of plan.plannedOrders()) {
          assert.ok(order.quantity > 0);
          assert.ok(order.quantity >= moq || near(order.quantity, moq), `order ${order.quantity} < MOQ ${moq}`);
          if (multiple > 0) assert.ok(isMultiple(order.quantity, multiple), `order ${order.quantity} not a multiple of ${multiple}`);
          assert.ok(order.quantity <= plan.lot_policy.split_qty || near(order.quantity, plan.lot_policy.split_qty));
        }
        if (multiple > 0) plan.planned_receipts.forEach((q) => assert.ok(isMultiple(q, multiple)));
      });
    });

    it(`${supplyPolicy}: balances reconcile bucket by bucket and releases match receipts`, () => {
      forEachCase(4, supplyPolicy, (input, plan) => {
        let previous = input.on_hand;
        let receipts = 0;
        let releases = 0;
        for (let t = 0; t < plan.period_starts.length; t++) {
          const expected = previous + plan.scheduled_receipts[t]! + plan.planned_receipts[t]! - plan.gross_requirements[t]!;
          assert.ok(near(plan.projected_available[t]!, expected), `bucket ${t}`);
          previous = plan.projected_available[t]!;
          receipts += plan.planned_receipts[t]!;
          releases += plan.planned_releases[t]!;
        }
        assert.ok(near(receipts, releases));
      });
    });

    it(`${supplyPolicy}: no NaN or infinity in the MRP record, orders or financial plan`, () => {
      forEachCase(5, supplyPolicy, (input, plan) => {
        const finance = financialPlan(plan, { unit_cost: input.parameters.unit_cost!, unit_price: 2 * input.parameters.unit_cost! });
        const values = [
          ...plan.rows().flatMap((r) => Object.values(r)),
          ...plan.plannedOrders().flatMap((o) => Object.values(o)),
          ...plan.exceptions.flatMap((e) => Object.values(e)),
          ...finance.rows.flatMap((r) => Object.values(r)),
          ...Object.values(finance.totals),
        ];
        for (const v of values) if (typeof v === 'number') assert.ok(Number.isFinite(v), `non-finite ${v}`);
        // Inventory moves only by receipts in and goods shipped out.
        let inventory = Math.max(input.on_hand, 0) * input.parameters.unit_cost!;
        finance.rows.forEach((row, t) => {
          const receiptsValue = (plan.scheduled_receipts[t]! + plan.planned_receipts[t]!) * input.parameters.unit_cost!;
          assert.ok(near(row.inventory_value, inventory + receiptsValue - row.cost_of_goods), `bucket ${t}`);
          assert.ok(
            row.satisfied_demand <=
              plan.gross_requirements[t]! + Math.max(0, -(t === 0 ? input.on_hand : plan.projected_available[t - 1]!)) + 1e-6,
          );
          inventory = row.inventory_value;
        });
      });
    });
  }
});
