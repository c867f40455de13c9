/**
 * Safety stock from forecast uncertainty: an item-location with a target service level
 * keeps z(service level) x sigma over the lead time, where sigma comes from the prediction
 * intervals of the latest forecasts of the customer groups whose demand it plans (kept by
 * forecasting in compute's store). Without a service level, or without any forecast
 * interval to size from, the fixed `safety_stock` stands; the plan says which was used.
 */
import type { supply_compute_v1 as pb } from '@supply/contracts';
import type { LatestForecasts } from '../forecasting/latest';
import type { BucketSize } from '../engines/mrp';

/** Days per period of a timing interval or plan bucket (months and longer on average). */
const SPAN_DAYS: Readonly<Record<string, number>> = { day: 1, week: 7, month: 365.25 / 12, quarter: 365.25 / 4, year: 365.25 };
const DECIMALS = 4;

export interface SeriesUncertainty {
  customer_group_id: number;
  run_id: number;
  timing_interval: string;
  dates: string[];
  /** Error standard deviation per forecast period, aligned with `dates`. */
  sigma: number[];
}

/** Item id -> the latest forecast uncertainty of its series. */
export type UncertaintyReader = (itemIds: readonly number[]) => Promise<Map<number, SeriesUncertainty[]>>;

export function latestUncertainty(latest: LatestForecasts, tenant: string): UncertaintyReader {
  return async (itemIds) => {
    const byItem = new Map<number, SeriesUncertainty[]>();
    if (itemIds.length === 0) return byItem;
    for (const doc of await latest.find({ tenant, item_id: { $in: [...new Set(itemIds)] } })) {
      const list = byItem.get(doc.item_id) ?? [];
      list.push({
        customer_group_id: doc.customer_group_id,
        run_id: doc.run_id,
        timing_interval: doc.timing_interval,
        dates: doc.dates,
        sigma: doc.sigma,
      });
      byItem.set(doc.item_id, list);
    }
    return byItem;
  };
}

/** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must lie strictly between 0 and 1, got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/**
 * One series' error variance over the protection window: the window (max(lead time, 1)
 * plan buckets) in the forecast's own periods, the variances of those periods from the plan
 * start summed (errors of successive periods taken as independent: the square-root rule), a
 * fractional last period pro rata; periods beyond the forecast repeat its last.
 */
export function windowVariance(series: SeriesUncertainty, planStart: string, bucket: BucketSize, leadTime: number): number | null {
  const periodDays = SPAN_DAYS[series.timing_interval.toLowerCase()];
  if (!periodDays || series.sigma.length === 0) return null;
  const from = series.dates.findIndex((date) => date >= planStart);
  const sigma = from < 0 ? [series.sigma[series.sigma.length - 1]!] : series.sigma.slice(from);
  const periods = (Math.max(leadTime, 1) * SPAN_DAYS[bucket]!) / periodDays;
  const at = (k: number) => sigma[Math.min(k, sigma.length - 1)]!;
  let variance = 0;
  const whole = Math.floor(periods);
  for (let k = 0; k < whole; k++) variance += at(k) ** 2;
  variance += (periods - whole) * at(whole) ** 2;
  return variance;
}

export interface SafetyStockInput {
  fixed: number;
  /** 0: none. */
  service_level: number;
  lead_time: number;
  bucket: BucketSize;
  plan_start: string;
  /** The customer groups whose demand the item-location plans, and its share of their demand. */
  customer_group_ids: readonly number[];
  share: number;
  /** The latest forecast uncertainty of the item's series. */
  series: readonly SeriesUncertainty[];
}

const round = (v: number) => Math.round(v * 10 ** DECIMALS) / 10 ** DECIMALS;

/** The safety stock to plan with, and where it came from (`meta.safety_stock`). */
export function resolveSafetyStock(input: SafetyStockInput): pb.SafetyStockSource {
  const fixed = (note: string): pb.SafetyStockSource => ({
    source: 'fixed',
    quantity: input.fixed,
    service_level: input.service_level,
    z: 0,
    sigma_lead_time: 0,
    series: 0,
    forecast_run_ids: [],
    note,
  });
  if (!(input.service_level > 0 && input.service_level < 1)) return fixed('');
  const groups = new Set(input.customer_group_ids);
  let variance = 0;
  const used: SeriesUncertainty[] = [];
  for (const s of input.series) {
    if (!groups.has(s.customer_group_id)) continue;
    const v = windowVariance(s, input.plan_start, input.bucket, input.lead_time);
    if (v === null) continue;
    variance += v;
    used.push(s);
  }
  if (used.length === 0)
    return fixed('No forecast with prediction intervals for the demand planned here: the fixed safety stock was used.');
  const z = normalQuantile(input.service_level);
  // Series errors taken as independent: variances add; the share scales the demand and its spread alike.
  const sigma = input.share * Math.sqrt(variance);
  return {
    source: 'service_level',
    quantity: round(Math.max(0, z * sigma)),
    service_level: input.service_level,
    z: round(z),
    sigma_lead_time: round(sigma),
    series: used.length,
    forecast_run_ids: [...new Set(used.map((s) => s.run_id))].sort((a, b) => a - b),
    note: '',
  };
}
