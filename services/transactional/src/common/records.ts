import { ValidationError, fieldErrors, type FieldErrors, type IndexSpec } from '@supply/kit';

/** Most rows, ids or names one internal bulk call takes; callers chunk above it. */
export const MAX_BULK = 10_000;
/** Largest cursor page: the per_page maximum of every transactional read. */
export const MAX_PER_PAGE = 5_000;

/**
 * ISO 8601 UTC with microseconds, as the API shows every timestamp. `clock` is the
 * configured clock (CLOCK_NOW may shift it); the sub-millisecond digits come from the
 * monotonic high-resolution timer.
 */
export function timestamp(clock: () => Date = () => new Date()): string {
  const exact = performance.timeOrigin + performance.now() + (clock().getTime() - Date.now());
  const micros = Math.floor(exact * 1000);
  const seconds = new Date(Math.floor(micros / 1000)).toISOString().slice(0, 19);
  return `${seconds}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

/**
 * An index leading with `tenant` (every query filters by it); list `_id` last so the order
 * is total and keyset pages seek into it. A field is ascending unless given as `[field, -1]`.
 */
export function tenantIndex(name: string, ...fields: Array<string | [string, 1 | -1]>): IndexSpec {
  return { name, keys: [['tenant', 1], ...fields.map((field) => (typeof field === 'string' ? ([field, 1] as const) : field))] };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written `YYYY-MM-DD`. */
export function isDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = DATE.exec(value);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === value;
}

/** `date` plus `days` (may be negative), as `YYYY-MM-DD`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The comparison key of a name: names match exactly, ignoring case (as in reference data). */
export function nameKey(name: string): string {
  return name.toLowerCase();
}

/** Collects field errors and throws them together, keyed like the API shows them. */
export class FieldCheck {
  readonly errors: FieldErrors = fieldErrors();

  add(path: string, message: string): void {
    (this.errors[path] ??= []).push(message);
  }

  /** A positive integer id. */
  id(path: string, value: number): void {
    if (!Number.isSafeInteger(value) || value < 1) this.add(path, `The ${path} field must be a positive integer.`);
  }

  /** A non-empty name of at most 255 characters. */
  name(path: string, value: string): void {
    if (value.length === 0) this.add(path, `The ${path} field is required.`);
    else if (value.length > 255) this.add(path, `The ${path} field must not be greater than 255 characters.`);
  }

  date(path: string, value: string, required = true): void {
    if (!required && value === '') return;
    if (!isDate(value)) this.add(path, `The ${path} field must be a valid date (YYYY-MM-DD).`);
  }

  /** A finite number, at least `min` when given. */
  number(path: string, value: number, min?: number): void {
    if (!Number.isFinite(value)) this.add(path, `The ${path} field must be a number.`);
    else if (min !== undefined && value < min) this.add(path, `The ${path} field must be at least ${min}.`);
  }

  /** Throws the collected errors, if any. */
  done(): void {
    if (Object.keys(this.errors).length > 0) throw new ValidationError(this.errors);
  }
}

/** Refuses a bulk call above MAX_BULK rows. */
export function checkBatch(field: string, count: number): void {
  if (count > MAX_BULK) throw new ValidationError({ [field]: [`The ${field} field must not have more than ${MAX_BULK} items.`] });
}
