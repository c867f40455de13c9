import type { PlanResult } from './plan';
import { requireNonNegative, requireOneOf } from './validation';

/**
 * When planned purchases are paid for.
 * - `receipt` (default): in the bucket the goods arrive, where the inventory they become is valued.
 * - `release`: in the bucket the order is placed (past-due releases land in bucket 0).
 */
export const SPEND_TIMINGS = ['receipt', 'release'] as const;
export type SpendTiming = (typeof SPEND_TIMINGS)[number];

export interface FinancialAssumptions {
  unit_cost: number;
  unit_price: number;
  spend_timing?: SpendTiming;
}

/** The supply plan series a financial plan reads; a PlanResult satisfies it. */
export type SupplyPlanSeries = Pick<
  PlanResult,
  | 'period_starts'
  | 'on_hand'
  | 'gross_requirements'
  | 'scheduled_receipts'
  | 'projected_available'
  | 'planned_receipts'
  | 'planned_releases'
>;

export interface FinancialRow {
  period_start: string;
  /** Units shipped: this bucket's demand plus carried backlog, limited by the supply available in it. */
  satisfied_demand: number;
  revenue: number;
  cost_of_goods: number;
  gross_margin: number;
  /** Planned receipts × unit cost, in the receipt or release bucket (spend_timing). Scheduled receipts are already committed and excluded. */
  purchase_spend: number;
  /** max(projected_available, 0) × unit cost at the end of the bucket. */
  inventory_value: number;
}

export interface FinancialTotals {
  satisfied_demand: number;
  revenue: number;
  cost_of_goods: number;
  gross_margin: number;
  purchase_spend: number;
  /** Inventory value at the end of the last bucket. */
  ending_inventory_value: number;
}

export interface FinancialPlan {
  spend_timing: SpendTiming;
  rows: FinancialRow[];
  totals: FinancialTotals;
}

/**
 * Values a supply plan bucket by bucket.
 *   available supply  = max(projected_available[t-1], 0) + scheduled_receipts[t] + planned_receipts[t]
 *                       (projected_available[-1] = on_hand)
 *   satisfied demand  = min(gross_requirements[t] + backlog carried in, available supply)
 *   revenue = satisfied × price, cost_of_goods = satisfied × cost, gross_margin = revenue - cost_of_goods
 * Without a backlog this is min(gross requirements, available supply). Counting backlog shipped late
 * keeps inventory_value[t] = inventory_value[t-1] + receipts[t] × cost - cost_of_goods[t].
 */
export function financialPlan(plan: SupplyPlanSeries, assumptions: FinancialAssumptions): FinancialPlan {
  const unitCost = requireNonNegative('unit_cost', assumptions.unit_cost);
  const unitPrice = requireNonNegative('unit_price', assumptions.unit_price);
  const spendTiming = requireOneOf('spend_timing', assumptions.spend_timing ?? 'receipt', SPEND_TIMINGS);
  const spendSeries = spendTiming === 'receipt' ? plan.planned_receipts : plan.planned_releases;
  const buckets = plan.period_starts.length;
  const rows = new Array<FinancialRow>(buckets);
  const totals: FinancialTotals = {
    satisfied_demand: 0,
    revenue: 0,
    cost_of_goods: 0,
    gross_margin: 0,
    purchase_spend: 0,
    ending_inventory_value: 0,
  };
  let previous = plan.on_hand;
  for (let t = 0; t < buckets; t++) {
    const backlog = previous < 0 ? -previous : 0;
    const available = (previous > 0 ? previous : 0) + plan.scheduled_receipts[t] + plan.planned_receipts[t];
    const wanted = plan.gross_requirements[t] + backlog;
    const satisfied = wanted < available ? wanted : available;
    const closing = plan.projected_available[t];
    const revenue = satisfied * unitPrice;
    const costOfGoods = satisfied * unitCost;
    const row: FinancialRow = {
      period_start: plan.period_starts[t],
      satisfied_demand: satisfied,
      revenue,
      cost_of_goods: costOfGoods,
      gross_margin: revenue - costOfGoods,
      purchase_spend: spendSeries[t] * unitCost,
      inventory_value: (closing > 0 ? closing : 0) * unitCost,
    };
    rows[t] = row;
    totals.satisfied_demand += row.satisfied_demand;
    totals.revenue += row.revenue;
    totals.cost_of_goods += row.cost_of_goods;
    totals.gross_margin += row.gross_margin;
    totals.purchase_spend += row.purchase_spend;
    previous = closing;
  }
  totals.ending_inventory_value = rows[buckets - 1]?.inventory_value ?? 0;
  return { spend_timing: spendTiming, rows, totals };
}
