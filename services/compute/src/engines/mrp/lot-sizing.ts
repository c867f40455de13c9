import type { PlanningParameters } from './parameters';
import { PlanningInputError, optionalNonNegative, requireNonNegative, requireNonNegativeInteger, requirePositive } from './validation';

/**
 * Lot-sizing rules: how a bucket's net requirement becomes an order quantity.
 * - `lot_for_lot`: order exactly the net requirement.
 * - `fixed_order_quantity`: order whole lots of `fixed_order_qty`, as many as cover the net requirement.
 * - `economic_order_quantity`: order max(net requirement, EOQ), EOQ = sqrt(2·D·S/H).
 * - `period_order_quantity`: order what covers the next `periods_of_supply` buckets
 *   (explicit, or round(EOQ / average demand per bucket), at least 1).
 */
export const LOT_SIZING_RULES = ['lot_for_lot', 'fixed_order_quantity', 'economic_order_quantity', 'period_order_quantity'] as const;
export type LotSizingRule = (typeof LOT_SIZING_RULES)[number];

/** Yearly holding cost as a fraction of unit cost when `holding_rate` is not given. */
export const DEFAULT_HOLDING_RATE = 0.25;

/** Slack for float noise when comparing quantities; far below any meaningful stocking unit. */
export const QTY_EPSILON = 1e-9;

/**
 * Everything the netting loop needs to size an order, resolved once per item-location. The sizing
 * itself (rule -> MOQ -> multiple -> split) is inlined in runNetting, the hot loop.
 */
export interface LotPolicy {
  readonly lot_sizing_rule: LotSizingRule;
  /** Size of one fixed lot (FOQ rule), else 0. */
  readonly fixed_order_qty: number;
  /** EOQ used by the EOQ rule or to derive POQ periods, else 0. */
  readonly economic_order_qty: number;
  /** Buckets one POQ order covers, else 1. */
  readonly periods_of_supply: number;
  readonly min_order_qty: number;
  readonly order_multiple: number;
  /** Size of each full receipt when an order exceeds `max_order_qty`; Infinity when there is no maximum. */
  readonly split_qty: number;
  /** Smallest quantity that honours both MOQ and the order multiple (0 when neither is set). */
  readonly min_valid_qty: number;
}

export interface EoqInputs {
  /** Units per year. */
  annual_demand: number;
  /** Cost per order placed (S). */
  ordering_cost: number;
  /** Cost of holding one unit for a year (H). */
  holding_cost: number;
}

/** Wilson's EOQ = sqrt(2·D·S/H); 0 when there is no demand or ordering is free. */
export function economicOrderQuantity({ annual_demand, ordering_cost, holding_cost }: EoqInputs): number {
  if (annual_demand <= 0 || ordering_cost <= 0) return 0;
  return Math.sqrt((2 * annual_demand * ordering_cost) / holding_cost);
}

/** Smallest multiple of `multiple` that is >= qty; float noise just above a multiple does not add one. */
export function roundUpToMultiple(qty: number, multiple: number): number {
  if (multiple <= 0) return qty;
  return Math.ceil(qty / multiple - QTY_EPSILON) * multiple;
}

/** What the horizon tells the lot policy: average demand per bucket and buckets per year. */
export interface DemandProfile {
  average_demand: number;
  buckets_per_year: number;
}

/**
 * Validates the lot-sizing parameters and precomputes the policy. `demand` is only read for EOQ and
 * for POQ without explicit `periods_of_supply`, so callers may compute it lazily. `field` prefixes
 * error paths (`partner.parameters` in partner mode).
 */
export function resolveLotPolicy(params: PlanningParameters, demand: () => DemandProfile, field = 'parameters'): LotPolicy {
  const rule = params.lot_sizing_rule ?? 'lot_for_lot';
  if (!(LOT_SIZING_RULES as readonly string[]).includes(rule)) {
    throw new PlanningInputError(`${field}.lot_sizing_rule`, `must be one of ${LOT_SIZING_RULES.join(', ')}`);
  }
  // Field paths are only spelled out when a value fails: this runs once per item-location.
  const minOrderQty = isNonNegative(params.min_order_qty)
    ? (params.min_order_qty ?? 0)
    : optionalNonNegative(`${field}.min_order_qty`, params.min_order_qty);
  const orderMultiple = isNonNegative(params.order_multiple)
    ? (params.order_multiple ?? 0)
    : optionalNonNegative(`${field}.order_multiple`, params.order_multiple);
  const maxOrderQty = isNonNegative(params.max_order_qty)
    ? (params.max_order_qty ?? 0)
    : optionalNonNegative(`${field}.max_order_qty`, params.max_order_qty);
  const minValid = orderMultiple > 0 ? Math.max(orderMultiple, roundUpToMultiple(minOrderQty, orderMultiple)) : minOrderQty;

  let fixedOrderQty = 0;
  let eoq = 0;
  let periods = 1;
  if (rule === 'fixed_order_quantity') {
    const fixed = params.fixed_order_qty;
    fixedOrderQty = typeof fixed === 'number' && fixed > 0 && fixed < Infinity ? fixed : requirePositive(`${field}.fixed_order_qty`, fixed);
  } else if (rule === 'economic_order_quantity') {
    eoq = resolveEoq(params, demand(), field);
  } else if (rule === 'period_order_quantity') {
    if (params.periods_of_supply !== undefined) {
      periods = requireNonNegativeInteger(`${field}.periods_of_supply`, params.periods_of_supply);
      if (periods < 1) throw new PlanningInputError(`${field}.periods_of_supply`, 'must be >= 1');
    } else {
      const profile = demand();
      eoq = resolveEoq(params, profile, field);
      periods = profile.average_demand > 0 ? Math.max(1, Math.round(eoq / profile.average_demand)) : 1;
    }
  }
  return {
    lot_sizing_rule: rule,
    fixed_order_qty: fixedOrderQty,
    economic_order_qty: eoq,
    periods_of_supply: periods,
    min_order_qty: minOrderQty,
    order_multiple: orderMultiple,
    split_qty: maxOrderQty > 0 ? splitQuantity(maxOrderQty, orderMultiple, minValid) : Infinity,
    min_valid_qty: minValid,
  };
}

/** Undefined or a finite number >= 0 (what optionalNonNegative accepts). */
function isNonNegative(value: unknown): value is number | undefined {
  return value === undefined || (typeof value === 'number' && value >= 0 && value < Infinity);
}

function resolveEoq(params: PlanningParameters, demand: DemandProfile, field: string): number {
  const orderingCost = requireNonNegative(`${field}.ordering_cost`, params.ordering_cost);
  const unitCost = requirePositive(`${field}.unit_cost`, params.unit_cost);
  const holdingRate =
    params.holding_rate === undefined ? DEFAULT_HOLDING_RATE : requirePositive(`${field}.holding_rate`, params.holding_rate);
  return economicOrderQuantity({
    annual_demand: demand.average_demand * demand.buckets_per_year,
    ordering_cost: orderingCost,
    holding_cost: holdingRate * unitCost,
  });
}

/**
 * Full-receipt size under a maximum: the maximum rounded down to the order multiple, but never below
 * the smallest valid order (a maximum that conflicts with MOQ/multiple yields to them).
 */
function splitQuantity(maxOrderQty: number, orderMultiple: number, minValid: number): number {
  const capped = orderMultiple > 0 ? Math.floor(maxOrderQty / orderMultiple + QTY_EPSILON) * orderMultiple : maxOrderQty;
  return Math.max(capped, minValid);
}

/**
 * POQ lot at bucket `t`: the largest shortfall against safety stock over the `periods` buckets
 * starting at `t` (truncated at the horizon), given the balance at the end of `t` before this order.
 * Taking the largest, not the last, keeps a scheduled receipt inside the window from hiding a dip.
 */
export function periodOrderQuantity(
  gross: ArrayLike<number>,
  scheduled: ArrayLike<number> | undefined,
  t: number,
  balance: number,
  safetyStock: number,
  periods: number,
): number {
  let lot = safetyStock - balance;
  let running = balance;
  const end = Math.min(gross.length, t + periods);
  for (let j = t + 1; j < end; j++) {
    running += (scheduled === undefined ? 0 : scheduled[j]) - gross[j];
    const shortfall = safetyStock - running;
    if (shortfall > lot) lot = shortfall;
  }
  return lot;
}

/** Receipt quantities of one bucket's planned receipts, in order: full receipts first, remainder last. */
export function receiptQuantities(total: number, count: number, policy: LotPolicy): number[] {
  const pieces = new Array<number>(count);
  for (let i = 0; i < count - 1; i++) pieces[i] = policy.split_qty;
  pieces[count - 1] = count > 1 ? total - (count - 1) * policy.split_qty : total;
  return pieces;
}
