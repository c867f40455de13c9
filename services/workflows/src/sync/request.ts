/**
 * The request-level arguments of a load (not its rows): a current sync body
 * `{mode, dry_run, scope, options, data}`, a legacy body `{arguments, payload}`, or the
 * form fields of a file import. Problems are 422 field errors named by request path.
 */
import { jsonTooDeep, MAX_JSON_DEPTH, ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import type { SyncOptions } from '../jobs/repository';
import { SPECS, type Entity, type EntitySpec } from './entities';
import { MAX_NAME } from './rows';

/** Rows one JSON request may carry; larger loads use several requests or a file import. */
export const MAX_JSON_ROWS = 10_000;

/** Columns a file may have, so `field_mappings` indexes stop below it. */
export const MAX_COLUMNS = 256;

export type Shape = 'sync' | 'legacy';

/** What a load asks for, rows aside. */
export interface LoadRequest {
  spec: EntitySpec<Entity>;
  shape: Shape;
  mode: 'upsert' | 'replace';
  dry_run: boolean;
  scope: Record<string, string> | null;
  options: SyncOptions;
  /** Where rows sit in the request, for error paths: `data` or `payload`. */
  rows_path: string;
}

/** File imports only: how columns map to row fields. */
export interface FileOptions {
  headers_match_exactly: boolean;
  field_mappings: Array<string | null> | null;
}

export const DEFAULT_OPTIONS: SyncOptions = { allow_record_creation: true, allow_record_update: true, continue_on_error: false };

class Errors {
  readonly fields: FieldErrors = fieldErrors();
  add(path: string, message: string): void {
    (this.fields[path] ??= []).push(message);
  }
  throwIfAny(): void {
    if (Object.keys(this.fields).length > 0) throw new ValidationError(this.fields);
  }
}

/** Laravel's `boolean`: true, false, 1, 0, "1", "0"; forms also send "true" / "false". */
function toBoolean(value: unknown): boolean | undefined {
  if (value === true || value === 1 || value === '1' || value === 'true') return true;
  if (value === false || value === 0 || value === '0' || value === 'false') return false;
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Form fields may carry an object as a JSON string (`scope={"sale_type":"History"}`). */
function fromJsonString(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!text.startsWith('{') && !text.startsWith('[')) return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return value;
  }
  // Nested past the limit, it stays a string: the field then fails its type check.
  return jsonTooDeep(parsed, MAX_JSON_DEPTH) ? value : parsed;
}

function readBoolean(
  errors: Errors,
  source: Record<string, unknown>,
  key: string,
  path: string,
  fallback: boolean,
  required = false,
): boolean {
  const value = source[key];
  if (value === undefined || value === null || value === '') {
    if (required) errors.add(path, `The ${path} field is required.`);
    return fallback;
  }
  const parsed = toBoolean(value);
  if (parsed === undefined) errors.add(path, `The ${path} field must be true or false.`);
  return parsed ?? fallback;
}

function readScope(errors: Errors, spec: EntitySpec, raw: unknown): Record<string, string> | null {
  const value = fromJsonString(raw);
  if (value === undefined || value === null || value === '') return null;
  if (!isObject(value)) {
    errors.add('scope', 'The scope field must be an object.');
    return null;
  }
  const scope: Record<string, string> = {};
  for (const field of Object.keys(spec.scope)) {
    const v = value[field];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') errors.add(`scope.${field}`, `The scope.${field} field must be a string.`);
    else if (v.length > MAX_NAME) errors.add(`scope.${field}`, `The scope.${field} field must not be greater than ${MAX_NAME} characters.`);
    else scope[field] = v;
  }
  for (const field of Object.keys(value)) {
    if (!Object.hasOwn(spec.scope, field))
      errors.add(
        `scope.${field}`,
        `The scope.${field} field is prohibited; a ${spec.entity} scope takes ${Object.keys(spec.scope).join(' and ')}.`,
      );
  }
  return Object.keys(scope).length > 0 ? scope : null;
}

function readOptions(errors: Errors, raw: unknown): SyncOptions {
  const value = fromJsonString(raw);
  if (value === undefined || value === null || value === '') return { ...DEFAULT_OPTIONS };
  if (!isObject(value)) {
    errors.add('options', 'The options field must be an object.');
    return { ...DEFAULT_OPTIONS };
  }
  return {
    allow_record_creation: readBoolean(
      errors,
      value,
      'allow_record_creation',
      'options.allow_record_creation',
      DEFAULT_OPTIONS.allow_record_creation,
    ),
    allow_record_update: readBoolean(
      errors,
      value,
      'allow_record_update',
      'options.allow_record_update',
      DEFAULT_OPTIONS.allow_record_update,
    ),
    continue_on_error: readBoolean(errors, value, 'continue_on_error', 'options.continue_on_error', DEFAULT_OPTIONS.continue_on_error),
  };
}

const LEGACY_ARGUMENTS = ['allow_record_creation', 'allow_record_update', 'should_continue_on_error'];

/** Legacy arguments: all three are required booleans, as legacy loads always sent them. */
function readLegacyArguments(errors: Errors, body: Record<string, unknown>): SyncOptions {
  // A form may send them inside `arguments` (bracket fields or a JSON string) or at the top level.
  const nested = fromJsonString(body.arguments);
  if (body.arguments !== undefined && !isObject(nested)) errors.add('arguments', 'The arguments field must be an object.');
  const topLevel = body.arguments === undefined && LEGACY_ARGUMENTS.some((k) => body[k] !== undefined);
  const source = isObject(nested) ? nested : topLevel ? body : {};
  const prefix = topLevel ? '' : 'arguments.';
  return {
    allow_record_creation: readBoolean(errors, source, 'allow_record_creation', `${prefix}allow_record_creation`, false, true),
    allow_record_update: readBoolean(errors, source, 'allow_record_update', `${prefix}allow_record_update`, false, true),
    continue_on_error: readBoolean(errors, source, 'should_continue_on_error', `${prefix}should_continue_on_error`, false, true),
  };
}

function readRequest(errors: Errors, entity: Entity, shape: Shape, body: Record<string, unknown>): LoadRequest {
  const spec = SPECS[entity];
  if (shape === 'legacy') {
    return { spec, shape, mode: 'upsert', dry_run: false, scope: null, options: readLegacyArguments(errors, body), rows_path: 'payload' };
  }
  let mode: LoadRequest['mode'] = 'upsert';
  if (body.mode !== undefined && body.mode !== null && body.mode !== '') {
    if (body.mode === 'upsert' || body.mode === 'replace') mode = body.mode;
    else errors.add('mode', 'The selected mode is invalid.');
  }
  const scope = readScope(errors, spec, body.scope);
  if (mode === 'replace' && !scope && !errors.fields.scope) {
    errors.add('scope', `The scope field is required when mode is replace (name ${Object.keys(spec.scope).join(' and/or ')}).`);
  }
  return {
    spec,
    shape,
    mode,
    dry_run: readBoolean(errors, body, 'dry_run', 'dry_run', false),
    scope,
    options: readOptions(errors, body.options),
    rows_path: 'data',
  };
}

/** A JSON load: the request and its rows (1..MAX_JSON_ROWS of them). */
export function parseJsonLoad(entity: Entity, shape: Shape, body: unknown): { request: LoadRequest; rows: unknown[] } {
  const errors = new Errors();
  if (!isObject(body)) {
    errors.add('body', 'The request body must be a JSON object.');
    errors.throwIfAny();
  }
  const input = body as Record<string, unknown>;
  const request = readRequest(errors, entity, shape, input);
  const path = request.rows_path;
  const rows = input[path];
  if (rows === undefined || rows === null) errors.add(path, `The ${path} field is required.`);
  else if (!Array.isArray(rows)) errors.add(path, `The ${path} field must be an array.`);
  else if (rows.length === 0) errors.add(path, `The ${path} field must have at least 1 item.`);
  else if (rows.length > MAX_JSON_ROWS) {
    errors.add(
      path,
      `The ${path} field must not have more than ${MAX_JSON_ROWS} items; send larger loads in several requests or as a file import.`,
    );
  }
  errors.throwIfAny();
  return { request, rows: rows as unknown[] };
}

/** `field_mappings` as a JSON array string, a list of fields, or bracket fields `{0: ..., 1: ...}`. */
function readMappings(errors: Errors, spec: EntitySpec, raw: unknown): Array<string | null> | null {
  let value = fromJsonString(raw);
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string') value = value.split(',').map((s) => s.trim());
  if (isObject(value) && Object.keys(value).every((k) => /^\d+$/.test(k))) {
    // Indexes are client numbers: check them before anything is sized by them.
    const tooFar = Object.keys(value).filter((k) => k.length > 3 || Number(k) >= MAX_COLUMNS);
    for (const k of tooFar.slice(0, 5)) {
      errors.add(
        `field_mappings.${k.slice(0, 20)}`,
        `The field_mappings index must be below ${MAX_COLUMNS}, the most columns a file may have.`,
      );
    }
    if (tooFar.length > 0) return null;
    const list: Array<unknown> = Array.from({ length: Math.max(0, ...Object.keys(value).map(Number)) + 1 }, () => null);
    for (const [k, v] of Object.entries(value)) list[Number(k)] = v ?? null;
    value = list;
  }
  if (!Array.isArray(value)) {
    errors.add('field_mappings', 'The field_mappings field must be an array.');
    return null;
  }
  if (value.length > MAX_COLUMNS) {
    errors.add(
      'field_mappings',
      `The field_mappings field must not have more than ${MAX_COLUMNS} items, the most columns a file may have.`,
    );
    return null;
  }
  const seen = new Set<string>();
  const mappings = value.map((entry, i): string | null => {
    if (entry === null || entry === '') return null;
    if (typeof entry !== 'string' || !spec.fields.includes(entry)) {
      errors.add(
        `field_mappings.${i}`,
        `The selected field_mappings.${i} is invalid; use one of ${spec.fields.join(', ')} or an empty string to skip the column.`,
      );
      return null;
    }
    if (seen.has(entry)) errors.add(`field_mappings.${i}`, `The field_mappings.${i} field has a duplicate value.`);
    seen.add(entry);
    return entry;
  });
  const missing = spec.required.filter((f) => !seen.has(f));
  if (missing.length > 0 && !Object.keys(errors.fields).some((k) => k.startsWith('field_mappings'))) {
    errors.add('field_mappings', `The field_mappings must map a column to each required field; missing: ${missing.join(', ')}.`);
  }
  return mappings;
}

/** A file import's form fields (everything but the file). */
export function parseImportFields(entity: Entity, shape: Shape, fields: unknown): { request: LoadRequest; file: FileOptions } {
  const errors = new Errors();
  const input = isObject(fields) ? fields : {};
  const request = readRequest(errors, entity, shape, input);
  const file: FileOptions = {
    headers_match_exactly: readBoolean(errors, input, 'headers_match_exactly', 'headers_match_exactly', false),
    field_mappings: readMappings(errors, request.spec, input.field_mappings),
  };
  errors.throwIfAny();
  return { request, file };
}
