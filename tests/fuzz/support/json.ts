/**
 * JSON the fuzz suite writes itself, so bodies can hold what JSON.stringify cannot make:
 * own keys named `__proto__`, repeated keys, and number literals beyond double precision.
 */

/** A JSON object as its key/value pairs, in order, repeats and `__proto__` allowed. */
export class JsonObject {
  constructor(readonly entries: Array<[string, unknown]>) {}
}

/** A literal written as is: `9007199254740993`, `1e400`, `-0`. */
export class RawJson {
  constructor(readonly text: string) {}
}

export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonObject) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(',')}}`;
  }
  if (value === undefined) return 'null';
  return JSON.stringify(value);
}

/** A value as a form or query string value (objects and arrays as JSON). */
export function toFormValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof RawJson) return value.text;
  return toJson(value);
}
