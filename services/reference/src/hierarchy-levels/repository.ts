import type { LevelKind } from '@supply/contracts';
import type { Collection } from '@supply/kit';
import { tenantCollection } from '../common/collections';
import type { NamedRecord } from '../common/records';

export { LEVEL_KINDS, type LevelKind } from '@supply/contracts';

/**
 * One level of a tenant's item or customer group hierarchy. Names are unique across both
 * kinds because the legacy sales read turns every level into a field of the same record.
 */
export interface HierarchyLevelRecord extends NamedRecord {
  kind: LevelKind;
  /** Order within the kind; ties break on id. */
  position: number;
}

export const HIERARCHY_LEVELS = tenantCollection('hierarchy_levels', [['name_lower']]);

/** The tenant's levels of one kind, in order. */
export function levelsOf(levels: Collection<HierarchyLevelRecord>, tenant: string, kind: LevelKind): Promise<HierarchyLevelRecord[]> {
  return levels.find(
    { tenant, kind },
    {
      sort: [
        ['position', 1],
        ['_id', 1],
      ],
    },
  );
}
