/**
 * Parsing helpers for values a client chose: ids, tenant slugs, JSON nesting, and maps
 * keyed by client text. Every service and the gateway use these, so a limit is the same
 * wherever the value arrives.
 */
import type { FieldErrors } from './errors';

/** A tenant slug: lowercase letters, digits and dashes, 1..63 characters, not starting with a dash. */
export const TENANT_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const MAX_TENANT_LENGTH = 63;

/** Deepest array/object nesting any JSON body or JSON form field may have. */
export const MAX_JSON_DEPTH = 64;

/** Largest id a client may name: ids are safe integers (2^53 - 1). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** Field errors keyed by client-chosen paths: no prototype, so `__proto__` or `constructor` is just a key. */
export function fieldErrors(): FieldErrors {
  return Object.create(null) as FieldErrors;
}

/** Appends one message under `path` (safe for any path text). */
export function addFieldError(fields: FieldErrors, path: string, message: string): void {
  const list = Object.hasOwn(fields, path) ? fields[path] : undefined;
  if (list) list.push(message);
  else Object.defineProperty(fields, path, { value: [message], enumerable: true, writable: true, configurable: true });
}

/** A map keyed by client text that no key can corrupt (JSON-serialisable like a plain object). */
export function keyedByClient<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

/** `0`, or digits with no leading zero: the one way a client writes an integer in a path or query. */
const PLAIN_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * The one reader of an integer a client wrote as text (a path id, `page`, `per_page`,
 * `current_index`): plain decimal digits, `0` or without a leading zero, as a number; else
 * null. No sign, exponent, fraction, base prefix (`0x10`), space or empty string, and no
 * list (`page[]=5`). The number may exceed MAX_ID (`99999999999999999999` is 1e20, never
 * rounded into range): callers bound it, as parseId and the query schemas do.
 */
export function parseDecimal(raw: unknown): number | null {
  return typeof raw === 'string' && PLAIN_DECIMAL.test(raw) ? Number(raw) : null;
}

/**
 * A positive integer id written in decimal (`1` .. `9007199254740991`), else null: no sign,
 * exponent, leading zero or fraction, and never a number rounded from a longer one.
 */
export function parseId(raw: unknown): number | null {
  const id = typeof raw === 'number' ? raw : parseDecimal(raw);
  // A digit string past 2^53 - 1 reads as 2^53 or more, never as a safe integer.
  return id !== null && Number.isSafeInteger(id) && id >= 1 ? id : null;
}

/** What one walk over a parsed JSON value found: nesting past the limit, keys named `__proto__`. */
export interface JsonScan {
  tooDeep: boolean;
  /** Dotted paths (`hierarchy.__proto__`, `data.3.__proto__`) of the first few `__proto__` keys. */
  protoKeys: string[];
}

/**
 * Walks a parsed JSON value with its own stack (no recursion, so any depth is safe): whether
 * it nests arrays/objects deeper than `max` (the top level is 1), and where it has a key
 * named `__proto__`, which some parsers and schemas drop silently.
 */
export function scanJson(value: unknown, max = MAX_JSON_DEPTH): JsonScan {
  const protoKeys: string[] = [];
  const stack: Array<[unknown, number, string]> = [[value, 1, '']];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return { tooDeep: true, protoKeys };
    const entries: Array<[string, unknown]> = Array.isArray(node) ? node.map((v, i) => [String(i), v]) : Object.entries(node);
    for (const [key, child] of entries) {
      const at = path ? `${path}.${key}` : key;
      if (key === '__proto__' && protoKeys.length < 5) protoKeys.push(at);
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1, at]);
    }
  }
  return { tooDeep: false, protoKeys };
}

/** Whether a parsed JSON value nests arrays/objects deeper than `max` (see scanJson). */
export function jsonTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  return scanJson(value, max).tooDeep;
}
