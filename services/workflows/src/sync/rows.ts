/**
 * What a sync row is, per entity: its fields, the key a load may hold once, the replace
 * scope, and the checks a row passes on its own (before any name is resolved).
 */
import type { RowErrorRecord } from '../jobs/repository';

export const ENTITIES = ['sales', 'inventory'] as const;
export type Entity = (typeof ENTITIES)[number];

/** A row after its own checks: strings trimmed of nothing (names match as sent, ignoring case), quantity a number. */
export type CheckedRow = Record<string, string> & { quantity: number };

export interface EntitySpec {
  entity: Entity;
  jobKind: string;
  /** Every field a row may carry, in the order a file's columns usually come. */
  fields: readonly string[];
  required: readonly string[];
  /** Fields whose (case-insensitive) values identify a record: a load holds each key once. */
  keyFields: readonly string[];
  /** How an error names the key, e.g. "item, customer group, sale type, timing interval and sell date". */
  keyWords: string;
  dateField: string;
  /** Replace scope field -> the row field it constrains. */
  scope: Readonly<Record<string, string>>;
  /** What the entity's records are called in messages. */
  noun: string;
}

export const SALES: EntitySpec = {
  entity: 'sales',
  jobKind: 'sales_sync',
  fields: ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'],
  required: ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'],
  keyFields: ['item_name', 'customer_group_name', 'sale_type_name', 'timing_interval', 'sell_date'],
  keyWords: 'item, customer group, sale type, timing interval and sell date',
  dateField: 'sell_date',
  scope: { sale_type: 'sale_type_name', customer_group: 'customer_group_name' },
  noun: 'sales record',
};

export const INVENTORY: EntitySpec = {
  entity: 'inventory',
  jobKind: 'inventory_sync',
  fields: ['item_name', 'location_name', 'bin_name', 'lot_name', 'inventory_date', 'quantity', 'uom'],
  required: ['item_name', 'location_name', 'inventory_date', 'quantity', 'uom'],
  keyFields: ['item_name', 'location_name', 'bin_name', 'lot_name', 'inventory_date'],
  keyWords: 'item, location, bin, lot and inventory date',
  dateField: 'inventory_date',
  scope: { location: 'location_name', item: 'item_name' },
  noun: 'inventory record',
};

export const SPECS: Record<Entity, EntitySpec> = { sales: SALES, inventory: INVENTORY };

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
    for (const [scopeField, rowField] of Object.entries(spec.scope)) {
      const wanted = scope[scopeField];
      const value = row[rowField];
      if (wanted && typeof value === 'string' && nameKey(value) !== nameKey(wanted)) {
        fail(rowField, `The ${path}.${rowField} must be ${wanted}: the row lies outside the replace scope.`);
      }
    }
  }
  return errors.length > 0 ? { row: null, errors } : { row: row as CheckedRow, errors };
}
