/**
 * Input checks shared by the planning modules. Bad master data fails one item-location with a
 * field path, so a batch caller can report it and keep planning the rest.
 */
export class PlanningInputError extends Error {
  /** Dotted path of the offending input field, e.g. `parameters.lead_time` or `gross_requirements.12`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'PlanningInputError';
    this.field = field;
  }
}

export function requireFiniteNumber(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new PlanningInputError(field, 'must be a finite number');
  }
  return value;
}

export function requireNonNegative(field: string, value: unknown): number {
  const n = requireFiniteNumber(field, value);
  if (n < 0) throw new PlanningInputError(field, 'must be >= 0');
  return n;
}

/** Optional quantities treat `undefined` as 0, the "no constraint" value. */
export function optionalNonNegative(field: string, value: unknown): number {
  return value === undefined ? 0 : requireNonNegative(field, value);
}

export function requirePositive(field: string, value: unknown): number {
  const n = requireFiniteNumber(field, value);
  if (n <= 0) throw new PlanningInputError(field, 'must be > 0');
  return n;
}

export function requireNonNegativeInteger(field: string, value: unknown): number {
  const n = requireNonNegative(field, value);
  if (!Number.isInteger(n)) throw new PlanningInputError(field, 'must be an integer');
  return n;
}

export function requireOneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new PlanningInputError(field, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function requireLength(field: string, series: ArrayLike<number>, length: number): void {
  if (series === null || typeof series !== 'object' || series.length !== length) {
    throw new PlanningInputError(field, `must have one value per bucket (${length})`);
  }
}

/** A per-bucket quantity that is negative, NaN or infinite cannot be netted. */
export function badQuantity(field: string, bucket: number): PlanningInputError {
  return new PlanningInputError(`${field}.${bucket}`, 'must be a finite number >= 0');
}
