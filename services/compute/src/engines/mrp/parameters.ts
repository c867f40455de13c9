import type { LotSizingRule } from './lot-sizing';

/**
 * Replenishment parameters of one item-location. Quantities are in stocking units, times in
 * buckets of the plan's calendar. Optional quantities default to 0, meaning "no constraint".
 */
export interface PlanningParameters {
  /** Buckets between releasing an order and receiving it; integer >= 0. */
  lead_time: number;
  /** Projected available is kept at or above this at the end of every bucket. */
  safety_stock?: number;
  min_order_qty?: number;
  /** Every receipt is a whole number of these. */
  order_multiple?: number;
  /** An order above this becomes several receipts in the same bucket; 0 or undefined = no maximum. */
  max_order_qty?: number;
  /** Default `lot_for_lot`. */
  lot_sizing_rule?: LotSizingRule;
  /** Required by `fixed_order_quantity`. */
  fixed_order_qty?: number;
  /** Cost per order (S); required by EOQ, and by POQ without `periods_of_supply`. */
  ordering_cost?: number;
  /** Yearly holding cost as a fraction of unit cost; default 0.25 (DEFAULT_HOLDING_RATE). */
  holding_rate?: number;
  /** Required by EOQ, and by POQ without `periods_of_supply` (H = holding_rate × unit_cost). */
  unit_cost?: number;
  /** POQ: buckets each order covers; when absent, round(EOQ / average demand per bucket), min 1. */
  periods_of_supply?: number;
}
