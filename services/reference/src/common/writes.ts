import type { Collection, Doc } from '@supply/kit';
import { isUniqueClash } from './field-errors';
import { timestamp, type TenantRecord } from './records';

type NewRecord<R extends TenantRecord> = Omit<R, '_id' | 'tenant' | 'created_at' | 'updated_at'>;

/**
 * Inserts a validated batch all or nothing. `validate` runs first and throws the 422; when a
 * concurrent writer takes a unique value between validation and insert, it runs again to
 * name the field, and only an unexplained clash stays a conflict.
 */
export async function insertValidated<R extends TenantRecord>(
  collection: Collection<R>,
  tenant: string,
  validate: () => Promise<void>,
  build: () => Array<NewRecord<R>>,
): Promise<R[]> {
  await validate();
  const now = timestamp();
  const docs = build().map((d) => ({ ...d, tenant, created_at: now, updated_at: now }) as unknown as Omit<R, '_id'>);
  try {
    return await collection.insertMany(docs);
  } catch (err) {
    if (isUniqueClash(err)) await validate();
    throw err;
  }
}

/** Applies a validated `$set` to one record of the tenant (same race handling as inserts). */
export async function updateValidated<R extends TenantRecord>(
  collection: Collection<R>,
  record: R,
  validate: () => Promise<void>,
  set: Partial<R>,
): Promise<R> {
  await validate();
  if (Object.keys(set).length === 0) return record;
  try {
    const updated = await collection.findOneAndUpdate(
      { _id: record._id, tenant: record.tenant },
      { $set: { ...set, updated_at: timestamp() } as Partial<Doc> },
    );
    return updated ?? record;
  } catch (err) {
    if (isUniqueClash(err)) await validate();
    throw err;
  }
}
