import { AppError, ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';

/**
 * Collects 422 field errors of a write. Keys and attribute names follow the gateway's
 * Laravel convention: `name` / "name" for a single object, `3.name` / "3.name" for the
 * fourth element of an array body; a top-level `unit_cost` reads "unit cost".
 */
export class FieldErrorBag {
  readonly fields: FieldErrors = fieldErrors();

  constructor(private readonly arrayBody: boolean) {}

  /** `template` names the attribute `:attribute`, e.g. "The :attribute has already been taken." */
  add(index: number, field: string, template: string): void {
    const path = this.arrayBody ? `${index}.${field}` : field;
    const attribute = path.includes('.') ? path : path.replace(/_/g, ' ');
    (this.fields[path] ??= []).push(template.replace(':attribute', attribute));
  }

  get empty(): boolean {
    return Object.keys(this.fields).length === 0;
  }

  /** Throws the 422, records of an array body in index order (the summary names the first). */
  throwIfAny(): void {
    if (this.empty) return;
    const index = (path: string) => (this.arrayBody ? Number.parseInt(path, 10) : 0);
    const entries = Object.entries(this.fields).sort(([a], [b]) => index(a) - index(b));
    throw new ValidationError(Object.fromEntries(entries));
  }
}

export const MESSAGES = {
  required: 'The :attribute field is required.',
  taken: 'The :attribute has already been taken.',
  distinct: 'The :attribute field has a duplicate value.',
  exists: 'The selected :attribute is invalid.',
} as const;

/** Whether a store error is a unique-index clash (another writer won a race past our checks). */
export function isUniqueClash(err: unknown): boolean {
  return err instanceof AppError && err.code === 'conflict';
}
