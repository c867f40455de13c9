import { bucketsPerYearFromStarts } from './buckets';
import type { PlanException } from './exceptions';
import { receiptQuantities, resolveLotPolicy, type DemandProfile, type LotPolicy } from './lot-sizing';
import { SUPPLY_POLICIES, mapModeInputs, type PlanInput, type PlanningMode, type SupplyPolicy } from './modes';
import { runNetting } from './netting';
import { allocateSeries } from './series-slab';
import {
  PlanningInputError,
  optionalNonNegative,
  requireNonNegativeInteger,
  requireOneOf,
  requirePositive,
} from './validation';

/** One bucket of the textbook MRP record, as it goes out in API responses. */
export interface MrpRow {
  period_start: string;
  gross_requirements: number;
  scheduled_receipts: number;
  /** Balance at the end of the bucket after all receipts; negative is a carried backlog. */
  projected_available: number;
  /** Shortfall against safety stock before this bucket's planned receipts. */
  net_requirements: number;
  /** Quantity due in this bucket from new orders (all split receipts together). */
  planned_receipts: number;
  /** Quantity to release in this bucket (receipts offset by lead time; bucket 0 includes past-due releases). */
  planned_releases: number;
}

/** One planned order (one receipt); an order split by the maximum appears as several. */
export interface PlannedOrder {
  receipt_bucket: number;
  receipt_period: string;
  /** receipt_bucket - lead_time; negative when the release is past due. */
  release_bucket: number;
  /** Start of the release bucket; bucket 0's start when past due. */
  release_period: string;
  quantity: number;
  past_due: boolean;
}

/** JSON form of a plan: parameters resolved, MRP rows, orders, exceptions. */
export interface PlanJson {
  mode: PlanningMode;
  supply_policy: SupplyPolicy;
  on_hand: number;
  safety_stock: number;
  lead_time: number;
  lot_sizing_rule: LotPolicy['lot_sizing_rule'];
  economic_order_qty: number | null;
  periods_of_supply: number | null;
  past_due_releases: number;
  rows: MrpRow[];
  planned_orders: PlannedOrder[];
  exceptions: readonly PlanException[];
}

/** A planned item-location: per-bucket series as typed arrays, rows built only on request. */
export interface PlanResult {
  readonly mode: PlanningMode;
  readonly supply_policy: SupplyPolicy;
  readonly period_starts: readonly string[];
  /** Starting balance used (the partner's on-hand in partner mode). */
  readonly on_hand: number;
  readonly safety_stock: number;
  readonly lead_time: number;
  readonly lot_policy: LotPolicy;
  /** Demand netted (the projected sell-through in partner mode). */
  readonly gross_requirements: ArrayLike<number>;
  /** Supply netted (in-transit plus open orders in partner mode); zeros when none. */
  readonly scheduled_receipts: ArrayLike<number>;
  readonly projected_available: Float64Array;
  readonly net_requirements: Float64Array;
  readonly planned_receipts: Float64Array;
  readonly planned_releases: Float64Array;
  /** Receipts per bucket when a maximum order quantity applies; null otherwise. */
  readonly receipt_counts: Uint32Array | null;
  /** Total quantity of releases that fell before bucket 0 (included in planned_releases[0]). */
  readonly past_due_releases: number;
  readonly exceptions: readonly PlanException[];
  rows(): MrpRow[];
  plannedOrders(): PlannedOrder[];
  toJSON(): PlanJson;
}

/** Average demand per bucket and the annualisation factor, for EOQ and POQ. */
function demandProfile(gross: ArrayLike<number>, input: PlanInput): DemandProfile {
  let sum = 0;
  for (let t = 0; t < gross.length; t++) sum += gross[t];
  return {
    average_demand: sum / gross.length,
    buckets_per_year: input.buckets_per_year === undefined
      ? bucketsPerYearFromStarts(input.period_starts)
      : requirePositive('buckets_per_year', input.buckets_per_year),
  };
}

/**
 * Plans one item-location: maps the mode's inputs, resolves the lot policy, nets bucket by bucket.
 * Throws PlanningInputError (with the field path) on invalid input; never returns NaN.
 */
export function planItemLocation(input: PlanInput): PlanResult {
  const periodStarts = input.period_starts;
  if (!Array.isArray(periodStarts) || periodStarts.length === 0) {
    throw new PlanningInputError('period_starts', 'needs at least one bucket');
  }
  const buckets = periodStarts.length;
  const mode: PlanningMode = input.mode ?? 'standard';
  const mapped = mapModeInputs(input);
  const field = mode === 'partner' ? 'partner.parameters' : 'parameters';
  const params = mapped.parameters;
  if (params === null || typeof params !== 'object') throw new PlanningInputError(field, 'is required');
  const leadTime = requireNonNegativeInteger(`${field}.lead_time`, params.lead_time);
  const safetyStock = optionalNonNegative(`${field}.safety_stock`, params.safety_stock);
  const supplyPolicy = requireOneOf('supply_policy', input.supply_policy ?? 'unconstrained', SUPPLY_POLICIES);
  const policy = resolveLotPolicy(params, () => demandProfile(mapped.gross, input), field);

  const plan = new ItemLocationPlan(
    mode,
    supplyPolicy,
    periodStarts,
    mapped.on_hand,
    safetyStock,
    leadTime,
    policy,
    mapped.gross,
    mapped.scheduled ?? allocateSeries(buckets),
    allocateSeries(buckets),
    allocateSeries(buckets),
    allocateSeries(buckets),
    allocateSeries(buckets),
    policy.split_qty === Infinity ? null : new Uint32Array(buckets),
  );
  const exceptions = runNetting(
    {
      gross: mapped.gross,
      scheduled: mapped.scheduled,
      on_hand: mapped.on_hand,
      safety_stock: safetyStock,
      lead_time: leadTime,
      first_plannable_bucket: supplyPolicy === 'constrained' ? Math.min(leadTime, buckets) : 0,
      policy,
      period_starts: periodStarts,
    },
    plan,
  );
  plan.recordExceptions(exceptions);
  return plan;
}

class ItemLocationPlan implements PlanResult {
  past_due_releases = 0;
  exceptions: readonly PlanException[] = [];

  constructor(
    readonly mode: PlanningMode,
    readonly supply_policy: SupplyPolicy,
    readonly period_starts: readonly string[],
    readonly on_hand: number,
    readonly safety_stock: number,
    readonly lead_time: number,
    readonly lot_policy: LotPolicy,
    readonly gross_requirements: ArrayLike<number>,
    readonly scheduled_receipts: ArrayLike<number>,
    readonly projected_available: Float64Array,
    readonly net_requirements: Float64Array,
    readonly planned_receipts: Float64Array,
    readonly planned_releases: Float64Array,
    readonly receipt_counts: Uint32Array | null,
  ) {}

  recordExceptions(exceptions: readonly PlanException[]): void {
    this.exceptions = exceptions;
    let pastDue = 0;
    for (const e of exceptions) if (e.type === 'release_in_past') pastDue += e.quantity;
    this.past_due_releases = pastDue;
  }

  rows(): MrpRow[] {
    const rows = new Array<MrpRow>(this.period_starts.length);
    for (let t = 0; t < rows.length; t++) {
      rows[t] = {
        period_start: this.period_starts[t],
        gross_requirements: this.gross_requirements[t],
        scheduled_receipts: this.scheduled_receipts[t],
        projected_available: this.projected_available[t],
        net_requirements: this.net_requirements[t],
        planned_receipts: this.planned_receipts[t],
        planned_releases: this.planned_releases[t],
      };
    }
    return rows;
  }

  plannedOrders(): PlannedOrder[] {
    const orders: PlannedOrder[] = [];
    for (let t = 0; t < this.planned_receipts.length; t++) {
      const total = this.planned_receipts[t];
      if (total <= 0) continue;
      const release = t - this.lead_time;
      const count = this.receipt_counts === null ? 1 : this.receipt_counts[t];
      for (const quantity of receiptQuantities(total, count, this.lot_policy)) {
        orders.push({
          receipt_bucket: t,
          receipt_period: this.period_starts[t],
          release_bucket: release,
          release_period: this.period_starts[release < 0 ? 0 : release],
          quantity,
          past_due: release < 0,
        });
      }
    }
    return orders;
  }

  toJSON(): PlanJson {
    const rule = this.lot_policy.lot_sizing_rule;
    const usesEoq = rule === 'economic_order_quantity' || (rule === 'period_order_quantity' && this.lot_policy.economic_order_qty > 0);
    return {
      mode: this.mode,
      supply_policy: this.supply_policy,
      on_hand: this.on_hand,
      safety_stock: this.safety_stock,
      lead_time: this.lead_time,
      lot_sizing_rule: rule,
      economic_order_qty: usesEoq ? this.lot_policy.economic_order_qty : null,
      periods_of_supply: rule === 'period_order_quantity' ? this.lot_policy.periods_of_supply : null,
      past_due_releases: this.past_due_releases,
      rows: this.rows(),
      planned_orders: this.plannedOrders(),
      exceptions: this.exceptions,
    };
  }
}
