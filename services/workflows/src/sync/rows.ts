/**
 * The checks a sync row passes on its own (before any name is resolved), by its entity's
 * fields, key and replace scope (entities/).
 */
import type { RowErrorRecord } from '../jobs/repository';
import type { EntitySpec } from './entities/spec';

/** A row after its own checks: strings as sent (names match ignoring case), quantity a number. */
export type CheckedRow = Record<string, string> & { quantity: number };

export const MAX_NAME = 255;

/** A real calendar date written YYYY-MM-DD, from the year 1000 on (the transactional service takes no earlier one). */
export function isIsoDate(value: string): boolean {
  if (!/^[1-9]\d{3}-\d{2}-\d{2}$/.test(value)) return false;
  const at = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === value;
}

/** Names compare exactly but ignoring case, as the reference service resolves them. */
export function nameKey(value: string): string {
  return value.toLowerCase();
}

/** The row's key in one string; two rows of a load with the same one would write the same record. */
export function rowKey(spec: EntitySpec, row: CheckedRow): string {
  return spec.keyFields.map((f) => nameKey(row[f] ?? '')).join('\u0000');
}

/** Numbers, or numeric strings as a form or file carries them (Laravel's `numeric`). */
function toQuantity(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || !/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

export interface RowCheck {
  row: CheckedRow | null;
  errors: RowErrorRecord[];
}

/**
 * Checks one row on its own: required fields, strings, date, quantity >= 0, and (replace)
 * that it lies inside the scope. `path` is where the row sits in the request (`data.3`).
 */
export function checkRow(spec: EntitySpec, raw: unknown, index: number, path: string, scope: Record<string, string> | null): RowCheck {
  const errors: RowErrorRecord[] = [];
  const fail = (field: string | null, message: string) => errors.push({ row: index, field: field ? `${path}.${field}` : path, message });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    fail(null, `The ${path} field must be an object.`);
    return { row: null, errors };
  }
  const input = raw as Record<string, unknown>;
  const row: Record<string, string | number> = {};
  for (const field of spec.fields) {
    const value = input[field];
    const attribute = `${path}.${field}`;
    const missing = value === undefined || value === null || value === '';
    if (missing) {
      if (spec.required.includes(field)) fail(field, `The ${attribute} field is required.`);
      else row[field] = '';
      continue;
    }
    if (field === 'quantity') {
      const quantity = toQuantity(value);
      if (quantity === undefined) fail(field, `The ${attribute} field must be a number.`);
      else if (quantity < 0) fail(field, `The ${attribute} field must be at least 0.`);
      else row[field] = quantity;
      continue;
    }
    if (typeof value !== 'string') {
      fail(field, `The ${attribute} field must be a string.`);
      continue;
    }
    if (value.length > MAX_NAME) {
      fail(field, `The ${attribute} field must not be greater than ${MAX_NAME} characters.`);
      continue;
    }
    if (field === spec.dateField && !isIsoDate(value)) {
      fail(field, `The ${attribute} field must be a valid date (YYYY-MM-DD).`);
      continue;
    }
    row[field] = value;
  }
  if (scope) {
    for (const [scopeField, { field: rowField }] of Object.entries(spec.scope)) {
      const wanted = scope[scopeField];
      const value = row[rowField];
      if (wanted && typeof value === 'string' && nameKey(value) !== nameKey(wanted)) {
        fail(rowField, `The ${path}.${rowField} must be ${wanted}: the row lies outside the replace scope.`);
      }
    }
  }
  return errors.length > 0 ? { row: null, errors } : { row: row as CheckedRow, errors };
}
