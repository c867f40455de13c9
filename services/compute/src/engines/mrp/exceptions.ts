/**
 * Planner action messages raised while netting one item-location.
 * - `release_in_past`: a receipt needed in `bucket` would have had to be released before the first
 *   bucket. The receipt stays planned; its release is added to bucket 0's planned releases (past due).
 * - `below_safety_stock`: projected available at the end of `bucket` is >= 0 but below safety stock.
 * - `stockout`: projected available at the end of `bucket` is negative (a backlog carried forward).
 * A bucket is reported as either `stockout` or `below_safety_stock`, never both.
 */
export const EXCEPTION_TYPES = ['release_in_past', 'below_safety_stock', 'stockout'] as const;
export type ExceptionType = (typeof EXCEPTION_TYPES)[number];

export interface PlanException {
  type: ExceptionType;
  /** Index of the bucket concerned: the receipt bucket for `release_in_past`. */
  bucket: number;
  period_start: string;
  /**
   * `release_in_past`: quantity released past due; `below_safety_stock`: safety stock minus projected
   * available; `stockout`: units short (minus projected available).
   */
  quantity: number;
  /** `release_in_past` only: how many buckets before the first bucket the release was due. */
  buckets_past_due?: number;
}
