import { keyedByClient } from '@supply/kit';
import type { supply_reference_v1 } from '@supply/contracts';
import type { FieldErrorBag } from '../common/field-errors';
import { nameKey } from '../common/records';
import type { HierarchyLevelRecord } from './repository';

/** Stored hierarchy values: level id (as a string key) -> value. Renaming a level keeps them. */
export type StoredHierarchy = Record<string, string>;

/** Values keyed by level name, in level order, set levels only. */
export function presentHierarchy(stored: StoredHierarchy | undefined, levels: HierarchyLevelRecord[]): Record<string, string> {
  // Level names are client text (a level may be named `__proto__`).
  const out = keyedByClient<string>();
  for (const level of levels) {
    const value = stored?.[String(level._id)];
    if (value) out[level.name] = value;
  }
  return out;
}

/** Values parallel to `levels`, "" where unset (the legacy sales read flattens these). */
export function hierarchyColumns(stored: StoredHierarchy | undefined, levels: HierarchyLevelRecord[]): string[] {
  return levels.map((level) => stored?.[String(level._id)] ?? '');
}

/**
 * `current` with the written values applied: keys are level names (any case); an empty value
 * clears the level; a name that is not one of the kind's levels is a field error.
 */
export function applyHierarchy(
  current: StoredHierarchy,
  written: supply_reference_v1.HierarchyValues | undefined,
  levels: HierarchyLevelRecord[],
  bag: FieldErrorBag,
  index: number,
): StoredHierarchy {
  if (!written) return current;
  const byName = new Map(levels.map((l) => [l.name_lower, l]));
  const next = { ...current };
  for (const [name, value] of Object.entries(written.values)) {
    const level = byName.get(nameKey(name));
    if (!level) {
      const known = levels.map((l) => l.name).join(', ') || 'none';
      bag.add(index, `hierarchy.${name}`, `The :attribute field is not a hierarchy level here (levels: ${known}).`);
      continue;
    }
    if (value === '') delete next[String(level._id)];
    else next[String(level._id)] = value;
  }
  return next;
}
