import type { PlanException } from './exceptions';
import { QTY_EPSILON, periodOrderQuantity, type LotPolicy } from './lot-sizing';
import { badQuantity } from './validation';

/** One item-location's netting inputs, already mapped from its planning mode. */
export interface NettingRun {
  gross: ArrayLike<number>;
  /** Absent means no scheduled receipts. */
  scheduled: ArrayLike<number> | undefined;
  on_hand: number;
  safety_stock: number;
  lead_time: number;
  /** First bucket a planned receipt may land in: 0 when unconstrained, the lead time when constrained. */
  first_plannable_bucket: number;
  policy: LotPolicy;
  period_starts: readonly string[];
}

/** Output series, one value per bucket; must be zero-filled on entry. */
export interface NettingRecord {
  projected_available: Float64Array;
  net_requirements: Float64Array;
  planned_receipts: Float64Array;
  planned_releases: Float64Array;
  /** Receipts per bucket when a maximum can split orders; null when every positive receipt is one order. */
  receipt_counts: Uint32Array | null;
}

const NO_EXCEPTIONS: readonly PlanException[] = Object.freeze([]);

/**
 * Bucket-by-bucket MRP netting. For bucket t:
 *   balance         = projected_available[t-1] + scheduled_receipts[t] - gross_requirements[t]
 *   net_requirement = max(0, safety_stock - balance)
 *   planned receipt = lot (rule -> MOQ -> multiple -> split by maximum) when net_requirement > 0
 *                     and t >= first_plannable_bucket
 *   release         = receipt offset by lead_time; a release before bucket 0 is added to bucket 0
 * Unmet demand is carried as negative projected available (backlog), never dropped.
 * Returns the exceptions found; the series are written into `out`.
 */
export function runNetting(run: NettingRun, out: NettingRecord): readonly PlanException[] {
  const { gross, scheduled, policy, period_starts: periodStarts } = run;
  const safetyStock = run.safety_stock;
  const leadTime = run.lead_time;
  const firstPlannable = run.first_plannable_bucket;
  const projected = out.projected_available;
  const netRequirements = out.net_requirements;
  const plannedReceipts = out.planned_receipts;
  const plannedReleases = out.planned_releases;
  const receiptCounts = out.receipt_counts;
  const rule = policy.lot_sizing_rule;
  const isPoq = rule === 'period_order_quantity';
  const isFoq = rule === 'fixed_order_quantity';
  const isEoq = rule === 'economic_order_quantity';
  const fixedQty = policy.fixed_order_qty;
  const eoq = policy.economic_order_qty;
  const periods = policy.periods_of_supply;
  const moq = policy.min_order_qty;
  const multiple = policy.order_multiple;
  const splitQty = policy.split_qty;
  const minValid = policy.min_valid_qty;
  const canSplit = splitQty !== Infinity;
  const buckets = projected.length;
  // Tolerance scales with the stock level so float noise in large balances never triggers an order.
  const tolerance = QTY_EPSILON * Math.max(1, safetyStock, Math.abs(run.on_hand));
  let exceptions: PlanException[] | null = null;
  let balance = run.on_hand;

  for (let t = 0; t < buckets; t++) {
    const demand = gross[t];
    if (!(demand >= 0 && demand < Infinity)) throw badQuantity('gross_requirements', t);
    let receipt = 0;
    if (scheduled !== undefined) {
      receipt = scheduled[t];
      if (!(receipt >= 0 && receipt < Infinity)) throw badQuantity('scheduled_receipts', t);
    }
    balance += receipt - demand;
    const shortfall = safetyStock - balance;
    if (shortfall > tolerance) {
      netRequirements[t] = shortfall;
      if (t >= firstPlannable) {
        // Order sizing is inlined (rule -> MOQ -> multiple -> split): it runs in a large share of buckets.
        let lot = shortfall;
        if (isPoq) lot = periodOrderQuantity(gross, scheduled, t, balance, safetyStock, periods);
        else if (isFoq) lot = Math.ceil(shortfall / fixedQty - QTY_EPSILON) * fixedQty;
        else if (isEoq && eoq > lot) lot = eoq;
        if (lot < moq) lot = moq;
        if (multiple > 0) lot = Math.ceil(lot / multiple - QTY_EPSILON) * multiple;
        if (canSplit) {
          // Full receipts of splitQty plus a remainder raised to the smallest valid order.
          const count = lot > splitQty ? Math.ceil(lot / splitQty - QTY_EPSILON) : 1;
          const remainder = lot - (count - 1) * splitQty;
          if (remainder < minValid) lot += minValid - remainder;
          receiptCounts![t] = count;
        }
        plannedReceipts[t] = lot;
        // Rebuilt from safety stock so a lot-for-lot top-up lands exactly on it, without float drift.
        balance = safetyStock + (lot - shortfall);
        const release = t - leadTime;
        if (release >= 0) {
          plannedReleases[release] += lot;
        } else {
          plannedReleases[0] += lot;
          (exceptions ??= []).push({
            type: 'release_in_past',
            bucket: t,
            period_start: periodStarts[t],
            quantity: lot,
            buckets_past_due: -release,
          });
        }
      }
    }
    projected[t] = balance;
    if (safetyStock - balance > tolerance) {
      (exceptions ??= []).push(
        balance < -tolerance
          ? { type: 'stockout', bucket: t, period_start: periodStarts[t], quantity: -balance }
          : { type: 'below_safety_stock', bucket: t, period_start: periodStarts[t], quantity: safetyStock - balance },
      );
    }
  }
  return exceptions ?? NO_EXCEPTIONS;
}
