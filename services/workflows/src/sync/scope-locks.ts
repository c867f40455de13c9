/**
 * One replace at a time per scope: a replace deletes inside its scope whatever it did not
 * load, so two at once (or one inside the other's scope) would delete each other's rows.
 */
import { ConflictError, type Collection, type Doc, type Store } from '@supply/kit';
import { timestamp } from '../jobs/repository';
import { nameKey } from './rows';

export interface ScopeLockDoc extends Doc {
  _id: string;
  tenant: string;
  entity: string;
  /** Scope fields, names compared ignoring case. */
  scope: Record<string, string>;
  job_id: number;
  created_at: string;
}

/** Two scopes overlap unless some field both name differs (an unnamed field covers everything). */
export function scopesOverlap(a: Record<string, string>, b: Record<string, string>): boolean {
  return Object.keys(a).every((field) => b[field] === undefined || nameKey(b[field]!) === nameKey(a[field]!));
}

export class ScopeLocks {
  private constructor(private readonly locks: Collection<ScopeLockDoc>) {}

  static async open(store: Store): Promise<ScopeLocks> {
    return new ScopeLocks(
      await store.collection<ScopeLockDoc>({
        name: 'scope_locks',
        indexes: [
          {
            name: 'tenant_entity',
            keys: [
              ['tenant', 1],
              ['entity', 1],
            ],
          },
        ],
      }),
    );
  }

  static idOf(tenant: string, entity: string, scope: Record<string, string>): string {
    const canonical = Object.keys(scope)
      .sort()
      .map((field) => `${field}=${nameKey(scope[field]!)}`)
      .join('&');
    return `${tenant}:${entity}:${canonical}`;
  }

  /** Takes the scope for `job_id`; 409 when a running replace holds the same or an overlapping scope. */
  async take(tenant: string, entity: string, scope: Record<string, string>, jobId: number): Promise<string> {
    const conflict = (held: ScopeLockDoc | null) =>
      new ConflictError(
        `A replace sync of an overlapping scope is already running${held ? ` (job ${held.job_id})` : ''}; retry when it has finished.`,
      );
    const held = await this.locks.find({ tenant, entity });
    const overlapping = held.find((lock) => lock.job_id !== jobId && scopesOverlap(lock.scope, scope));
    if (overlapping) throw conflict(overlapping);
    const id = ScopeLocks.idOf(tenant, entity, scope);
    try {
      await this.locks.insertOne({ _id: id, tenant, entity, scope, job_id: jobId, created_at: timestamp() });
    } catch (err) {
      if (err instanceof ConflictError) throw conflict(await this.locks.findById(id));
      throw err;
    }
    return id;
  }

  async release(id: string, jobId: number): Promise<void> {
    await this.locks.deleteOne({ _id: id, job_id: jobId });
  }
}
