import { bucketsPerYearFromStarts } from './buckets';
import type { PlanException } from './exceptions';
import { receiptQuantities, resolveLotPolicy, type DemandProfile, type LotPolicy } from './lot-sizing';
import { SUPPLY_POLICIES, mapModeInputs, type PlanInput, type PlanningMode, type SupplyPolicy } from './modes';
import { deriveNetRequirements, deriveReleases, nettingTolerance, runNetting } from './netting';
import { allocateSeries } from './series-slab';
import { PlanningInputError, optionalNonNegative, requireNonNegativeInteger, requireOneOf, requirePositive } from './validation';

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
    buckets_per_year:
      input.buckets_per_year === undefined
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
  // Field paths are only spelled out when a value fails: this runs once per item-location.
  const lead = params.lead_time;
  const leadTime = Number.isInteger(lead) && lead >= 0 ? lead : requireNonNegativeInteger(`${field}.lead_time`, lead);
  const safety = params.safety_stock;
  const safetyStock =
    safety === undefined
      ? 0
      : typeof safety === 'number' && safety >= 0 && safety < Infinity
        ? safety
        : optionalNonNegative(`${field}.safety_stock`, safety);
  const supplyPolicy = requireOneOf('supply_policy', input.supply_policy ?? 'unconstrained', SUPPLY_POLICIES);
  const policy = resolveLotPolicy(params, () => demandProfile(mapped.gross, input), field);

  const projected = allocateSeries(buckets);
  const receipts = allocateSeries(buckets);
  const counts = policy.split_qty !== Infinity ? allocateSeries(buckets) : null;
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
    projected,
    receipts,
    counts,
  );
  return new ItemLocationPlan(
    mode,
    supplyPolicy,
    periodStarts,
    mapped.on_hand,
    safetyStock,
    leadTime,
    policy,
    mapped.gross,
    mapped.scheduled,
    projected,
    receipts,
    counts,
    exceptions,
  );
}

/**
 * Netting stores projected available and planned receipts (and split counts); the other series are
 * derived from them exactly on first read, and rows() reads them directly, so a plan costs two
 * small slab views until someone asks for more.
 */
class ItemLocationPlan implements PlanResult {
  readonly past_due_releases: number;
  #scheduled: ArrayLike<number> | undefined;
  #net: Float64Array | undefined;
  #releases: Float64Array | undefined;
  #counts: Uint32Array | null | undefined;

  constructor(
    readonly mode: PlanningMode,
    readonly supply_policy: SupplyPolicy,
    readonly period_starts: readonly string[],
    readonly on_hand: number,
    readonly safety_stock: number,
    readonly lead_time: number,
    readonly lot_policy: LotPolicy,
    readonly gross_requirements: ArrayLike<number>,
    scheduled: ArrayLike<number> | undefined,
    readonly projected_available: Float64Array,
    readonly planned_receipts: Float64Array,
    private readonly counts: Float64Array | null,
    readonly exceptions: readonly PlanException[],
  ) {
    this.#scheduled = scheduled;
    let pastDue = 0;
    for (let i = 0; i < exceptions.length; i++) {
      const e = exceptions[i];
      if (e.type === 'release_in_past') pastDue += e.quantity;
    }
    this.past_due_releases = pastDue;
  }

  get scheduled_receipts(): ArrayLike<number> {
    return (this.#scheduled ??= allocateSeries(this.period_starts.length));
  }

  get net_requirements(): Float64Array {
    if (this.#net === undefined) {
      this.#net = allocateSeries(this.period_starts.length);
      deriveNetRequirements(this.gross_requirements, this.#scheduled, this.on_hand, this.safety_stock, this.projected_available, this.#net);
    }
    return this.#net;
  }

  get planned_releases(): Float64Array {
    if (this.#releases === undefined) {
      this.#releases = allocateSeries(this.period_starts.length);
      deriveReleases(this.planned_receipts, this.lead_time, this.#releases);
    }
    return this.#releases;
  }

  get receipt_counts(): Uint32Array | null {
    if (this.#counts === undefined) {
      this.#counts = this.counts === null ? null : Uint32Array.from(this.counts);
    }
    return this.#counts;
  }

  rows(): MrpRow[] {
    const n = this.period_starts.length;
    const projected = this.projected_available;
    const receipts = this.planned_receipts;
    const scheduled = this.#scheduled;
    const gross = this.gross_requirements;
    const safetyStock = this.safety_stock;
    const leadTime = this.lead_time;
    // Net requirements and releases are replayed inline exactly as deriveNetRequirements / deriveReleases do, without allocating the series.
    const tolerance = nettingTolerance(safetyStock, this.on_hand);
    let pastDue = 0;
    for (let t = 0; t <= leadTime && t < n; t++) pastDue += receipts[t];
    let previous = this.on_hand;
    const rows = new Array<MrpRow>(n);
    for (let t = 0; t < n; t++) {
      const receipt = scheduled === undefined ? 0 : scheduled[t];
      const shortfall = safetyStock - (previous + (receipt - gross[t]));
      const due = t + leadTime;
      rows[t] = {
        period_start: this.period_starts[t],
        gross_requirements: gross[t],
        scheduled_receipts: receipt,
        projected_available: projected[t],
        net_requirements: shortfall > tolerance ? shortfall : 0,
        planned_receipts: receipts[t],
        planned_releases: t === 0 ? pastDue : due < n ? 0 + receipts[due] : 0,
      };
      previous = projected[t];
    }
    return rows;
  }

  plannedOrders(): PlannedOrder[] {
    const orders: PlannedOrder[] = [];
    const n = this.period_starts.length;
    const receipts = this.planned_receipts;
    const counts = this.counts;
    for (let t = 0; t < n; t++) {
      const total = receipts[t];
      if (total <= 0) continue;
      const release = t - this.lead_time;
      const count = counts === null ? 1 : counts[t];
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
