import type { CollectionSpec, IndexSpec } from '@supply/kit';

/**
 * A tenant's collection with integer ids: every read filters by tenant and pages by id;
 * `unique` lists the per-tenant unique keys besides the id (e.g. `name_lower`).
 */
export function tenantCollection(name: string, unique: ReadonlyArray<ReadonlyArray<string>>, extra: IndexSpec[] = []): CollectionSpec {
  return {
    name,
    autoIncrement: true,
    indexes: [
      {
        name: 'tenant_id',
        keys: [
          ['tenant', 1],
          ['_id', 1],
        ],
      },
      ...unique.map((fields) => ({
        name: `tenant_${fields.join('_')}`,
        keys: [['tenant', 1] as const, ...fields.map((f) => [f, 1] as const)],
        unique: true,
      })),
      ...extra,
    ],
  };
}
