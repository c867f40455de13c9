/**
 * From the tenant's data to the engine's input, with no I/O: which customer groups' sales a
 * location plans for, the demand series of each mode, and the item-location's parameters.
 * The rules are written out in the docs/supply-planning.md; sources.ts reads what they need.
 */
import type { supply_reference_v1 as ref } from '@supply/contracts';
import { type PartnerPlanInput, type PlanningParameters, type StandardPlanInput, type SupplyPolicy } from '../engines/mrp';
import type { BucketClock } from './calendar';

export const HISTORY = 'history';
export const FORECAST = 'forecast';

/** A sales record as planning reads it. */
export interface SalesPoint {
  customer_group_id: number;
  sale_type: typeof HISTORY | typeof FORECAST;
  sell_date: string;
  quantity: number;
}

/** One item's sales to one customer group, placed on the plan's buckets. */
export interface GroupDemand {
  /** Forecast per plan bucket, and whether any Forecast record falls in the bucket. */
  forecast: Float64Array;
  hasForecast: Uint8Array;
  /** History of the same bucket one year earlier, per plan bucket. */
  lastYear: Float64Array;
  /** History of the sell-through window before plan start, oldest bucket first. */
  sellThrough: Float64Array;
  /** History records dated in the sell-through window: 0 means no sell-through was reported. */
  sellThroughRecords: number;
}

/** Places one item's sales records on the clock, by customer group. Records outside every window are ignored. */
export function groupDemand(clock: BucketClock, records: Iterable<SalesPoint>): Map<number, GroupDemand> {
  const n = clock.buckets;
  const shift = clock.yearShift;
  const window = clock.sellThroughWindow;
  const byGroup = new Map<number, GroupDemand>();
  const of = (group: number) => {
    let demand = byGroup.get(group);
    if (!demand) {
      demand = {
        forecast: new Float64Array(n),
        hasForecast: new Uint8Array(n),
        lastYear: new Float64Array(n),
        sellThrough: new Float64Array(window),
        sellThroughRecords: 0,
      };
      byGroup.set(group, demand);
    }
    return demand;
  };
  for (const record of records) {
    const t = clock.indexOf(record.sell_date);
    if (record.sale_type === FORECAST) {
      if (t < 0 || t >= n) continue;
      const demand = of(record.customer_group_id);
      demand.forecast[t] += record.quantity;
      demand.hasForecast[t] = 1;
      continue;
    }
    if (t + shift >= 0 && t + shift < n) of(record.customer_group_id).lastYear[t + shift] += record.quantity;
    if (t < 0 && t >= -window) {
      const demand = of(record.customer_group_id);
      demand.sellThrough[window + t] += record.quantity;
      demand.sellThroughRecords++;
    }
  }
  return byGroup;
}

/** Which customer groups' sales a location plans for, and its share of them. */
export interface Attribution {
  customer_group_ids: number[];
  customer_group_names: string[];
  share: number;
  /** The location's own customer group (named after it); null when it has none. */
  own_group: { id: number; name: string } | null;
}

/**
 * Customer groups and locations of a tenant, and which group belongs to which location: a
 * customer group named like a location (ignoring case) is that location's own account, e.g. a
 * partner's. Groups no location owns are served by the locations that own none.
 */
export class DemandOwnership {
  private readonly ownGroup = new Map<string, { id: number; name: string }>();
  private readonly shared: Array<{ id: number; name: string }>;

  constructor(groups: ReadonlyArray<{ id: number; name: string }>, locationNames: readonly string[]) {
    const locations = new Set(locationNames.map((name) => name.toLowerCase()));
    const shared: Array<{ id: number; name: string }> = [];
    for (const group of groups) {
      const key = group.name.toLowerCase();
      if (locations.has(key)) this.ownGroup.set(key, { id: group.id, name: group.name });
      else shared.push({ id: group.id, name: group.name });
    }
    this.shared = shared;
  }

  ownGroupOf(locationName: string): { id: number; name: string } | null {
    return this.ownGroup.get(locationName.toLowerCase()) ?? null;
  }

  /** Whether a location shares the unowned groups' demand (it has no group of its own). */
  sharesDemand(locationName: string): boolean {
    return !this.ownGroup.has(locationName.toLowerCase());
  }

  /**
   * A location with its own group plans for that group alone; any other location plans an equal
   * share of the unowned groups, split over the item's `sharingLocations` (locations of the item
   * without a group of their own, this one included).
   */
  attribute(locationName: string, sharingLocations: number): Attribution {
    const own = this.ownGroupOf(locationName);
    if (own) return { customer_group_ids: [own.id], customer_group_names: [own.name], share: 1, own_group: own };
    return {
      customer_group_ids: this.shared.map((g) => g.id),
      customer_group_names: this.shared.map((g) => g.name),
      share: 1 / Math.max(1, sharingLocations),
      own_group: null,
    };
  }
}

export interface StandardDemand {
  gross: Float64Array;
  forecast_buckets: number;
  history_buckets: number;
  mixed_buckets: number;
}

/**
 * Standard demand: per bucket and customer group, the Forecast when one exists in that bucket,
 * else the History of the same bucket a year earlier; summed over the groups, times the share.
 */
export function standardDemand(buckets: number, byGroup: ReadonlyMap<number, GroupDemand>, attribution: Attribution): StandardDemand {
  const gross = new Float64Array(buckets);
  let forecastBuckets = 0;
  let historyBuckets = 0;
  const groups = attribution.customer_group_ids.map((id) => byGroup.get(id));
  for (let t = 0; t < buckets; t++) {
    let sum = 0;
    let fromForecast = 0;
    for (const demand of groups) {
      if (demand === undefined) continue;
      if (demand.hasForecast[t]) {
        sum += demand.forecast[t]!;
        fromForecast++;
      } else {
        sum += demand.lastYear[t]!;
      }
    }
    gross[t] = sum * attribution.share;
    if (fromForecast === groups.length && groups.length > 0) forecastBuckets++;
    else if (fromForecast === 0) historyBuckets++;
  }
  return {
    gross,
    forecast_buckets: forecastBuckets,
    history_buckets: historyBuckets,
    mixed_buckets: buckets - forecastBuckets - historyBuckets,
  };
}

/** Where an item-location's demand came from (`meta.demand.source`). */
export type DemandSourceKind = 'sell_through' | 'forecast' | 'history';

/** Forecast-else-History demand is `forecast` when any bucket draws on a Forecast, else `history` (last year's, or none). */
export function standardSource(demand: StandardDemand): DemandSourceKind {
  return demand.forecast_buckets + demand.mixed_buckets > 0 ? 'forecast' : 'history';
}

/**
 * The partner's sell-through: History of the partner location's own customer group over the
 * window before plan start. Null when there is none to plan from (no own customer group, or no
 * record of it in the window): the caller then falls back to forecast, else history.
 */
export function partnerSellThrough(byGroup: ReadonlyMap<number, GroupDemand>, attribution: Attribution): Float64Array | null {
  if (!attribution.own_group) return null;
  const demand = byGroup.get(attribution.own_group.id);
  return demand !== undefined && demand.sellThroughRecords > 0 ? demand.sellThrough : null;
}

/** The engine's parameters from a reference item-location (0 means "none" there, absent here). */
export function engineParameters(itemLocation: ref.ItemLocation): PlanningParameters {
  const optional = (value: number) => (value > 0 ? value : undefined);
  return {
    lead_time: itemLocation.lead_time,
    safety_stock: itemLocation.safety_stock,
    min_order_qty: itemLocation.min_order_qty,
    order_multiple: itemLocation.order_multiple,
    max_order_qty: itemLocation.max_order_qty,
    lot_sizing_rule: (itemLocation.lot_sizing_rule || 'lot_for_lot') as PlanningParameters['lot_sizing_rule'],
    fixed_order_qty: optional(itemLocation.fixed_order_qty),
    ordering_cost: optional(itemLocation.ordering_cost),
    holding_rate: optional(itemLocation.holding_rate),
    unit_cost: optional(itemLocation.unit_cost),
    periods_of_supply: optional(itemLocation.periods_of_supply),
  };
}

export interface PlanContext {
  clock: BucketClock;
  supply_policy: SupplyPolicy;
  itemLocation: ref.ItemLocation;
  on_hand: number;
  /** The safety stock resolved for the plan (service level or fixed); absent: the item-location's own. */
  safety_stock?: number;
}

function parametersOf(context: PlanContext): PlanningParameters {
  const parameters = engineParameters(context.itemLocation);
  return context.safety_stock === undefined ? parameters : { ...parameters, safety_stock: context.safety_stock };
}

export function standardPlanInput(context: PlanContext, demand: StandardDemand): StandardPlanInput {
  return {
    mode: 'standard',
    period_starts: context.clock.periodStarts,
    supply_policy: context.supply_policy,
    gross_requirements: demand.gross,
    on_hand: context.on_hand,
    parameters: parametersOf(context),
  };
}

/**
 * Partner input: demand is the average sell-through of the window (the partner's current rate
 * of sale), supply the partner's on-hand; the data model holds no shipments in transit or partner
 * open orders yet, so none are netted.
 */
export function partnerPlanInput(context: PlanContext, sellThrough: Float64Array): PartnerPlanInput {
  return {
    mode: 'partner',
    period_starts: context.clock.periodStarts,
    supply_policy: context.supply_policy,
    partner: {
      sell_through: sellThrough,
      sell_through_basis: 'average',
      on_hand: context.on_hand,
      parameters: parametersOf(context),
    },
  };
}
