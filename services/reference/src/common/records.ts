import type { Doc } from '@supply/kit';

/** Fields every reference record has: an integer id, its tenant, and timestamps. */
export interface TenantRecord extends Doc {
  _id: number;
  tenant: string;
  created_at: string;
  updated_at: string;
}

/** A record with a name unique per tenant, case-insensitively (unique index on `name_lower`). */
export interface NamedRecord extends TenantRecord {
  name: string;
  name_lower: string;
}

/** The comparison key of a name: names match exactly, ignoring case. */
export function nameKey(name: string): string {
  return name.toLowerCase();
}

/** ISO 8601 UTC with microseconds, as the API shows every timestamp. */
export function timestamp(at: Date = new Date()): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Most names, ids or records one internal bulk call takes; callers chunk above it. */
export const MAX_BULK = 10_000;
