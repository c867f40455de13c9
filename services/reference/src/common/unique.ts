import type { Collection } from '@supply/kit';
import { MESSAGES, type FieldErrorBag } from './field-errors';
import { findIn } from './reads';
import { nameKey, type TenantRecord } from './records';

export interface UniqueCandidate {
  /** Position in the write batch (0 for a single update). */
  index: number;
  value: string | undefined;
  /** The record being updated keeps its own value. */
  selfId?: number;
}

/**
 * Marks values (compared case-insensitively through the `<field>_lower` column) that repeat
 * inside the batch or that another record of the tenant already holds.
 */
export async function checkUnique<R extends TenantRecord>(
  collection: Collection<R>,
  tenant: string,
  field: string,
  candidates: UniqueCandidate[],
  bag: FieldErrorBag,
): Promise<void> {
  const column = `${field}_lower`;
  const seen = new Set<string>();
  const keys: string[] = [];
  for (const c of candidates) {
    if (c.value === undefined) continue;
    const key = nameKey(c.value);
    if (seen.has(key)) bag.add(c.index, field, MESSAGES.distinct);
    seen.add(key);
    keys.push(key);
  }
  if (keys.length === 0) return;
  const holders = new Map<string, number>();
  for (const r of await findIn(collection, { tenant }, column, keys)) holders.set(r[column] as string, r._id);
  for (const c of candidates) {
    if (c.value === undefined) continue;
    const holder = holders.get(nameKey(c.value));
    if (holder !== undefined && holder !== c.selfId) bag.add(c.index, field, MESSAGES.taken);
  }
}
