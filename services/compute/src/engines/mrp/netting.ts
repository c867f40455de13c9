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

/** Slack below safety stock that counts as on it; scales with the stock level so float noise in large balances never triggers an order. */
export function nettingTolerance(safetyStock: number, onHand: number): number {
  return QTY_EPSILON * Math.max(1, safetyStock, Math.abs(onHand));
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
 * Returns the exceptions found; projected available, receipts and (under a maximum) receipt counts
 * are written into the zero-filled `projected`, `receipts` and `counts`.
 *
 * Speed: each order's size feeds the next bucket's balance, so the divisions of the rounding
 * formulas (`Math.ceil(x / q - QTY_EPSILON) * q`) would sit on a serial chain through the whole
 * horizon. The loop therefore takes the quotient from a multiplication by the reciprocal (or, for a
 * fixed lot covering the shortfall, takes the lot outright) and checks it against the exact formula
 * with a branch: the check runs beside the chain instead of on it, and whenever it disagrees the
 * exact value is used, so results are those of the formula, bit for bit.
 */
export function runNetting(
  run: NettingRun,
  projected: Float64Array,
  receipts: Float64Array,
  counts: Float64Array | null,
): readonly PlanException[] {
  const { gross, scheduled, policy, period_starts: periodStarts } = run;
  const safetyStock = run.safety_stock;
  const leadTime = run.lead_time;
  const firstPlannable = run.first_plannable_bucket;
  const buckets = periodStarts.length;
  const rule = policy.lot_sizing_rule;
  const isPoq = rule === 'period_order_quantity';
  const isFoq = rule === 'fixed_order_quantity';
  const fixedQty = policy.fixed_order_qty;
  const inverseFixed = isFoq ? 1 / fixedQty : 0;
  // A shortfall in [fixedLow, fixedQty] takes exactly one lot: fl(s / q) <= 1 gives a ceiling <= 1,
  // and s >= 4e-9 q keeps fl(s / q) - QTY_EPSILON above 0, so the ceiling is 1 and the lot is q.
  const fixedLow = fixedQty * 4e-9;
  // EOQ only raises the lot: below it the rule's lot is the net requirement (0 disables the check).
  const eoq = rule === 'economic_order_quantity' ? policy.economic_order_qty : 0;
  const periods = policy.periods_of_supply;
  const moq = policy.min_order_qty;
  const multiple = policy.order_multiple;
  const inverseMultiple = multiple > 0 ? 1 / multiple : 0;
  const splitQty = policy.split_qty;
  const minValid = policy.min_valid_qty;
  const tolerance = nettingTolerance(safetyStock, run.on_hand);
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
    if (shortfall > tolerance && t >= firstPlannable) {
      // Order sizing (rule -> MOQ -> multiple -> split), inlined: it runs in a large share of buckets.
      let lot = shortfall;
      if (isFoq) {
        if (shortfall <= fixedQty && shortfall >= fixedLow) lot = fixedQty;
        else {
          let lots = Math.ceil(shortfall * inverseFixed - QTY_EPSILON);
          const exact = Math.ceil(shortfall / fixedQty - QTY_EPSILON);
          if (lots !== exact || lots === 0) lots = exact;
          lot = lots * fixedQty;
        }
      } else if (isPoq) lot = periodOrderQuantity(gross, scheduled, t, balance, safetyStock, periods);
      else if (eoq > lot) lot = eoq;
      if (lot < moq) lot = moq;
      if (multiple > 0) {
        // Same quotient as roundUpToMultiple; `=== 0` also sends a signed zero to the exact branch.
        let units = Math.ceil(lot * inverseMultiple - QTY_EPSILON);
        const exact = Math.ceil(lot / multiple - QTY_EPSILON);
        if (units !== exact || units === 0) units = exact;
        lot = units * multiple;
      }
      if (counts !== null) {
        // Full receipts of splitQty plus a remainder raised to the smallest valid order.
        const count = lot > splitQty ? Math.ceil(lot / splitQty - QTY_EPSILON) : 1;
        const remainder = lot - (count - 1) * splitQty;
        if (remainder < minValid) lot += minValid - remainder;
        counts[t] = count;
      }
      receipts[t] = lot;
      // Rebuilt from safety stock so a lot-for-lot top-up lands exactly on it, without float drift.
      balance = safetyStock + (lot - shortfall);
      const release = t - leadTime;
      if (release < 0) {
        (exceptions ??= []).push({
          type: 'release_in_past',
          bucket: t,
          period_start: periodStarts[t],
          quantity: lot,
          buckets_past_due: -release,
        });
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

/**
 * Net requirements as runNetting computes them (shortfall against safety stock before the bucket's
 * planned receipt), replayed from the projected balances with the same float operations.
 */
export function deriveNetRequirements(
  gross: ArrayLike<number>,
  scheduled: ArrayLike<number> | undefined,
  onHand: number,
  safetyStock: number,
  projected: Float64Array,
  into: Float64Array,
): void {
  const buckets = into.length;
  const tolerance = nettingTolerance(safetyStock, onHand);
  let previous = onHand;
  for (let t = 0; t < buckets; t++) {
    const receipt = scheduled === undefined ? 0 : scheduled[t];
    const shortfall = safetyStock - (previous + (receipt - gross[t]));
    if (shortfall > tolerance) into[t] = shortfall;
    previous = projected[t];
  }
}

/** Planned releases: each receipt offset by the lead time, past-due ones summed into bucket 0 in bucket order, as runNetting did. */
export function deriveReleases(receipts: Float64Array, leadTime: number, into: Float64Array): void {
  const buckets = into.length;
  for (let t = 0; t < buckets; t++) {
    const release = t - leadTime;
    into[release < 0 ? 0 : release] += receipts[t];
  }
}
