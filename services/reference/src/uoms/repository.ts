import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

export interface UomRecord extends NamedRecord {
  abbreviation: string;
  /** Abbreviations are unique per tenant too: sales rows name a uom by either. */
  abbreviation_lower: string;
}

export const UOMS = tenantCollection('uoms', [['name_lower'], ['abbreviation_lower']]);
