/**
 * The latest forecast uncertainty of every series, kept in compute's own store as each run
 * writes its forecasts: per forecast period, the standard deviation of the forecast error
 * implied by its 80% and 95% intervals. Supply planning sizes service-level safety stock
 * from it (README: Supply plan generation).
 */
import type { Collection, Doc, Store } from '@supply/kit';
import { NORMAL_QUANTILE } from '../engines/forecast/intervals';

export interface LatestForecastDoc extends Doc {
  /** `<tenant>:<item_customer_group_id>` */
  _id: string;
  tenant: string;
  item_id: number;
  customer_group_id: number;
  run_id: number;
  /** The forecast's timing interval span (day, week, month, ...). */
  timing_interval: string;
  dates: string[];
  /** Per period, aligned with `dates`. */
  sigma: number[];
  updated_at: number;
}

export type LatestForecasts = Collection<LatestForecastDoc>;

export function openLatestForecasts(store: Store): Promise<LatestForecasts> {
  return store.collection<LatestForecastDoc>({
    name: 'forecast_latest',
    indexes: [
      {
        name: 'tenant_item',
        keys: [
          ['tenant', 1],
          ['item_id', 1],
        ],
      },
    ],
  });
}

export const latestId = (tenant: string, itemCustomerGroupId: number) => `${tenant}:${itemCustomerGroupId}`;

/**
 * The error standard deviation a period's intervals imply, from their upper halves (the
 * side safety stock guards; the lower bound may be cut at zero): the mean of the 80% and 95%
 * estimates. Never negative.
 */
export function periodSigma(forecast: number, hi80: number, hi95: number): number {
  const from80 = (hi80 - forecast) / NORMAL_QUANTILE[80];
  const from95 = (hi95 - forecast) / NORMAL_QUANTILE[95];
  const sigma = (from80 + from95) / 2;
  return Number.isFinite(sigma) && sigma > 0 ? sigma : 0;
}
