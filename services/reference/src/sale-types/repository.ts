import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

/** History, Forecast, and whatever else a tenant loads sales as (read-only over HTTP). */
export type SaleTypeRecord = NamedRecord;

export const SALE_TYPES = tenantCollection('sale_types', [['name_lower']]);
