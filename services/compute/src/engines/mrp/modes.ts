import type { PlanningParameters } from './parameters';
import { PlanningInputError, badQuantity, requireFiniteNumber, requireLength, requireNonNegativeInteger, requireOneOf } from './validation';

/**
 * Planning modes: which demand and supply the (single) netting engine is fed.
 * - `standard`: plan the item-location's own replenishment. Demand is its `gross_requirements`
 *   (the caller picks forecast or history), supply its own on-hand and scheduled receipts, sized by
 *   its own parameters.
 * - `partner`: plan the replenishment of a trading partner's location (vendor-managed inventory).
 *   Demand is the partner's sell-through history projected onto the horizon, supply the partner's
 *   on-hand plus what is already heading there (our shipments in transit, the partner's confirmed
 *   open orders), sized by the partner location's parameters. Planned receipts are deliveries to the
 *   partner; planned releases are when we must ship them.
 */
export const PLANNING_MODES = ['standard', 'partner'] as const;
export type PlanningMode = (typeof PLANNING_MODES)[number];

/**
 * Whether replenishment can arrive sooner than the lead time allows.
 * - `unconstrained` (default): every net requirement is covered in its own bucket. A release that
 *   would fall before bucket 0 is added to bucket 0's planned releases and reported `release_in_past`.
 * - `constrained`: nothing released today arrives before bucket `lead_time`, so no planned receipt
 *   lands earlier. Earlier shortfalls stay visible as `below_safety_stock` / `stockout` (a carried
 *   backlog) and the first plannable bucket's order covers them.
 */
export const SUPPLY_POLICIES = ['unconstrained', 'constrained'] as const;
export type SupplyPolicy = (typeof SUPPLY_POLICIES)[number];

/**
 * How partner sell-through history becomes demand over the horizon.
 * - `repeat` (default): the history window repeats; plan bucket t takes history bucket t mod n, the
 *   same position one window earlier (52 weekly buckets of history give last year's same week).
 * - `average`: every plan bucket takes the average of the most recent `average_window` buckets.
 */
export const SELL_THROUGH_BASES = ['repeat', 'average'] as const;
export type SellThroughBasis = (typeof SELL_THROUGH_BASES)[number];

interface PlanInputBase {
  /** Bucket start dates `YYYY-MM-DD`, ascending, one per bucket (see bucketsFromCalendar); share one array across item-locations and do not mutate it. */
  period_starts: readonly string[];
  supply_policy?: SupplyPolicy;
  /** EOQ annualisation; default derived from period_starts spacing (weekly 52, monthly 12, daily 365). */
  buckets_per_year?: number;
}

export interface StandardPlanInput extends PlanInputBase {
  mode?: 'standard';
  /** Demand per bucket: forecast or history, as the caller decides. */
  gross_requirements: ArrayLike<number>;
  /** Stock at plan start; negative means backorders carried in. */
  on_hand: number;
  /** Open supply orders by due bucket. */
  scheduled_receipts?: ArrayLike<number>;
  parameters: PlanningParameters;
}

/** A trading partner's location as the partner reports it. */
export interface PartnerLocation {
  /** Partner's sales per bucket, oldest first, ending the bucket before plan start; same bucket size as the plan. */
  sell_through: ArrayLike<number>;
  sell_through_basis?: SellThroughBasis;
  /** `average` basis: how many most recent buckets to average; default the whole history. */
  average_window?: number;
  /** Partner's stock at plan start. */
  on_hand: number;
  /** Our shipments on their way to the partner, by arrival bucket. */
  in_transit?: ArrayLike<number>;
  /** Partner orders confirmed but not yet shipped, by due bucket (do not repeat what is in transit). */
  open_orders?: ArrayLike<number>;
  /** The partner location's replenishment parameters; lead time runs from our release to its arrival. */
  parameters: PlanningParameters;
}

export interface PartnerPlanInput extends PlanInputBase {
  mode: 'partner';
  partner: PartnerLocation;
}

export type PlanInput = StandardPlanInput | PartnerPlanInput;

/** What the netting engine consumes, whatever the mode. */
export interface ModeInputs {
  gross: ArrayLike<number>;
  scheduled: ArrayLike<number> | undefined;
  on_hand: number;
  parameters: PlanningParameters;
}

/** Maps a mode-specific input onto the netting engine's demand, supply and parameters. */
export function mapModeInputs(input: PlanInput): ModeInputs {
  const buckets = input.period_starts.length;
  const mode = requireOneOf('mode', input.mode ?? 'standard', PLANNING_MODES);
  if (mode === 'partner') {
    const partner = (input as PartnerPlanInput).partner;
    if (partner === null || typeof partner !== 'object') throw new PlanningInputError('partner', 'is required');
    return {
      gross: sellThroughDemand(partner, buckets),
      scheduled: partnerInbound(partner, buckets),
      on_hand: requireFiniteNumber('partner.on_hand', partner.on_hand),
      parameters: partner.parameters,
    };
  }
  const standard = input as StandardPlanInput;
  requireLength('gross_requirements', standard.gross_requirements, buckets);
  if (standard.scheduled_receipts !== undefined) {
    requireLength('scheduled_receipts', standard.scheduled_receipts, buckets);
  }
  return {
    gross: standard.gross_requirements,
    scheduled: standard.scheduled_receipts,
    on_hand: requireFiniteNumber('on_hand', standard.on_hand),
    parameters: standard.parameters,
  };
}

/** Partner demand over `buckets` plan buckets from its sell-through history (see SELL_THROUGH_BASES). */
export function sellThroughDemand(partner: PartnerLocation, buckets: number): Float64Array {
  const history = partner.sell_through;
  const n = history === null || typeof history !== 'object' ? 0 : history.length;
  if (n === 0) throw new PlanningInputError('partner.sell_through', 'needs at least one bucket of history');
  for (let i = 0; i < n; i++) {
    const v = history[i];
    if (!(v >= 0 && v < Infinity)) throw badQuantity('partner.sell_through', i);
  }
  const basis = requireOneOf('partner.sell_through_basis', partner.sell_through_basis ?? 'repeat', SELL_THROUGH_BASES);
  const demand = new Float64Array(buckets);
  if (basis === 'repeat') {
    for (let t = 0; t < buckets; t++) demand[t] = history[t % n];
    return demand;
  }
  const window = partner.average_window === undefined ? n : requireNonNegativeInteger('partner.average_window', partner.average_window);
  if (window < 1) throw new PlanningInputError('partner.average_window', 'must be >= 1');
  const from = Math.max(0, n - window);
  let sum = 0;
  for (let i = from; i < n; i++) sum += history[i];
  return demand.fill(sum / (n - from));
}

/** Partner supply already on its way: in-transit shipments plus confirmed open orders, by bucket. */
function partnerInbound(partner: PartnerLocation, buckets: number): Float64Array | undefined {
  const { in_transit: inTransit, open_orders: openOrders } = partner;
  if (inTransit === undefined && openOrders === undefined) return undefined;
  const inbound = new Float64Array(buckets);
  addSeries('partner.in_transit', inTransit, inbound);
  addSeries('partner.open_orders', openOrders, inbound);
  return inbound;
}

function addSeries(field: string, series: ArrayLike<number> | undefined, into: Float64Array): void {
  if (series === undefined) return;
  requireLength(field, series, into.length);
  for (let t = 0; t < into.length; t++) {
    const v = series[t];
    if (!(v >= 0 && v < Infinity)) throw badQuantity(field, t);
    into[t] += v;
  }
}
