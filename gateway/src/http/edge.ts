/**
 * Checks every request passes before a route handler sees it: a path that decodes, a
 * possible tenant, no `__proto__` query or body key, a body type the route reads, and JSON
 * no deeper than MAX_JSON_DEPTH (measured on the raw text, before it is parsed). Each
 * refusal is a 4xx answer, never a 5xx.
 */
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import {
  addFieldError,
  type AppError,
  fieldErrors,
  MAX_JSON_DEPTH,
  MAX_TENANT_LENGTH,
  scanJson,
  TENANT_SLUG,
  ValidationError,
} from '@supply/kit';
import { problem, unsupportedEncoding } from './errors';
import type { RouteDef } from './routes';

/** 400 for a path with a malformed percent-escape (`/%ff/...`), wherever it sits. */
export function decodablePath(req: Request, _res: Response, next: NextFunction): void {
  if (req.path.includes('%')) {
    try {
      decodeURIComponent(req.path);
    } catch {
      return next(problem('bad-request', 'The request path holds a malformed percent-escape (each % must start a UTF-8 byte like %2F).'));
    }
  }
  next();
}

/**
 * 404 for a first path segment no tenant can have: tenant slugs match TENANT_SLUG (at most
 * MAX_TENANT_LENGTH characters). Such a string is no tenant's, so the answer tells nothing
 * about which tenants exist; a possible slug goes on to authentication as before.
 */
export function possibleTenant(req: Request, _res: Response, next: NextFunction): void {
  const end = req.path.indexOf('/', 1);
  const raw = end === -1 ? req.path.slice(1) : req.path.slice(1, end);
  if (raw === '') return next();
  const segment = decodeURIComponent(raw);
  if (segment.length > MAX_TENANT_LENGTH || !TENANT_SLUG.test(segment)) {
    return next(
      problem(
        'not-found',
        `No tenant by that name: a tenant is 1 to ${MAX_TENANT_LENGTH} lowercase letters, digits and dashes, not starting with a dash.`,
      ),
    );
  }
  next();
}

/** `a[__proto__]`, `__proto__[x]`: a key the query parser would drop silently. */
const PROTO_KEY = /(?:^|\[)__proto__(?:[\][]|$)/;

/** The first `a=b&c=d` key with a `__proto__` part, decoded as qs would, else null. */
function protoKeyIn(pairs: string): string | null {
  if (!pairs.includes('proto')) return null;
  for (const pair of pairs.split('&')) {
    const eq = pair.indexOf('=');
    let key = (eq === -1 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
    try {
      key = decodeURIComponent(key);
    } catch {
      // qs keeps a malformed escape as written; so does this check
    }
    if (PROTO_KEY.test(key)) return key.slice(0, 100);
  }
  return null;
}

/** 400 `invalid-query` for a query parameter named `__proto__` at any level (no endpoint takes one). */
export function queryKeysChecked(req: Request, _res: Response, next: NextFunction): void {
  const at = req.originalUrl.indexOf('?');
  const key = at === -1 ? null : protoKeyIn(req.originalUrl.slice(at + 1));
  if (key !== null) return next(problem('invalid-query', `Unknown query parameter ${key}; no endpoint takes a parameter named __proto__.`));
  next();
}

/** express.urlencoded `verify`: a form field named `__proto__` would be dropped silently; it is a 422 instead. */
export function verifyFormKeys(_req: unknown, _res: unknown, buf: Buffer): void {
  const key = protoKeyIn(buf.toString('latin1'));
  if (key !== null) throw Object.assign(new Error('prototype-named form field'), { type: 'form.proto.key', field: key });
}

/** The media types each `accepts` value reads. */
const MEDIA: Record<'json' | 'form' | 'multipart', string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
};

export type Accepts = NonNullable<RouteDef['accepts']>;

/** What a route reads: `json` unless it says otherwise, nothing for GET and DELETE. */
export function acceptsOf(route: RouteDef): Accepts {
  return route.accepts ?? (route.method === 'get' || route.method === 'delete' ? 'none' : 'json');
}

function hasBodyBytes(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}

/**
 * The one rule for request bodies: a route that reads a body refuses (415) a non-empty body
 * of any other media type (or of none), and an empty one declared as another type, instead
 * of ignoring it and acting on defaults (a PATCH of nothing is a no-op 200). The
 * parsers skip such a body unread; this runs after the gates, so 401/403 come first.
 */
export function assertBodyType(accepts: Accepts, req: Request): void {
  const types = (Object.keys(MEDIA) as Array<keyof typeof MEDIA>).filter((k) => accepts.includes(k)).map((k) => MEDIA[k]);
  if (types.length === 0) return;
  const sent = req.get('Content-Type');
  if (hasBodyBytes(req) ? req.is(types) : sent === undefined || types.includes(sent.split(';')[0]!.trim().toLowerCase())) return;
  throw problem(
    'unsupported-media-type',
    `This endpoint reads ${types.join(' or ')}; the request body is ${sent ? sent.split(';')[0]!.trim() : 'of no declared Content-Type'}.`,
  );
}

/**
 * After JSON parsing, before any handler or schema: 422 for a key named `__proto__` (no
 * endpoint takes one, and schemas of free-form maps would drop it silently). The nesting
 * was measured before the parse (verifyJsonDepth), so this walk is at most MAX_JSON_DEPTH deep.
 */
export function bodyChecked(req: Request, _res: Response, next: NextFunction): void {
  const scan = scanJson(req.body);
  // Unreachable after verifyJsonDepth; kept so no parsed body this deep ever reaches a handler.
  if (scan.tooDeep) return next(problem('bad-request', JSON_DEPTH_DETAIL));
  if (scan.protoKeys.length > 0) {
    const fields = fieldErrors();
    for (const path of scan.protoKeys) addFieldError(fields, path, `The ${path} field is prohibited.`);
    return next(new ValidationError(fields));
  }
  next();
}

export const JSON_DEPTH_DETAIL = `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels, the most this API reads.`;

/** How JSON text in a charset lays out its code units; null for a charset other than UTF-8, UTF-16 or UTF-32. */
function codeUnitsOf(buf: Uint8Array, charset: string): { size: 1 | 2 | 4; littleEndian: boolean } | null {
  const name = charset.trim().toLowerCase();
  if (name === 'utf-8' || name === 'utf8') return { size: 1, littleEndian: true };
  const named = /^utf-(16|32)(le|be)?$/.exec(name);
  if (!named) return null;
  const size = named[1] === '16' ? 2 : 4;
  if (named[2]) return { size, littleEndian: named[2] === 'le' };
  // No byte order in the name: the BOM says, else the first character (JSON text starts with ASCII).
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.length < size) return { size, littleEndian: true };
  const first = (le: boolean) => (size === 2 ? view.getUint16(0, le) : view.getUint32(0, le));
  if (first(true) === 0xfeff) return { size, littleEndian: true };
  if (first(false) === 0xfeff) return { size, littleEndian: false };
  return { size, littleEndian: !(first(false) < 0x80 && first(true) >= 0x80) };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/**
 * Whether JSON text nests arrays/objects deeper than `max` (the top level is 1), read from its
 * raw bytes in `charset` before anything parses them: brackets count outside strings, a
 * string's escapes are stepped over, one pass and no recursion. Text that is not JSON is the
 * parser's to refuse; for JSON text the count is exact. Null when the charset is not one
 * JSON is written in (UTF-8, UTF-16, UTF-32).
 */
export function jsonTextTooDeep(buf: Uint8Array, charset = 'utf-8', max = MAX_JSON_DEPTH): boolean | null {
  const units = codeUnitsOf(buf, charset);
  if (!units) return null;
  const { size, littleEndian } = units;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const at =
    size === 1
      ? (i: number) => buf[i]!
      : size === 2
        ? (i: number) => view.getUint16(i, littleEndian)
        : (i: number) => view.getUint32(i, littleEndian);
  let depth = 0;
  let inString = false;
  for (let i = 0; i + size <= buf.length; i += size) {
    const unit = at(i);
    if (inString) {
      if (unit === BACKSLASH) i += size;
      else if (unit === QUOTE) inString = false;
    } else if (unit === QUOTE) inString = true;
    else if (OPENERS.has(unit)) {
      if (++depth > max) return true;
    } else if (CLOSERS.has(unit)) depth--;
  }
  return false;
}

/**
 * express.json `verify`: runs on the raw body (its Content-Encoding undone) before JSON.parse,
 * so a body nested deeper than MAX_JSON_DEPTH is refused (400 naming the limit) without being
 * parsed. JSON text is UTF-8, UTF-16 or UTF-32; another `utf-` charset the parser would
 * decode (UTF-7) is a 415, as an unknown charset is.
 */
export function verifyJsonDepth(_req: unknown, _res: unknown, buf: Buffer, charset: string): void {
  const tooDeep = jsonTextTooDeep(buf, charset);
  if (tooDeep === null) {
    throw Object.assign(new Error(`unsupported charset "${charset.toUpperCase()}": JSON is read as UTF-8, UTF-16 or UTF-32`), {
      type: 'charset.unsupported',
    });
  }
  if (tooDeep) throw Object.assign(new Error(JSON_DEPTH_DETAIL), { type: 'json.too.deep' });
}

const DECODERS = { gzip: createGunzip, deflate: createInflate, br: createBrotliDecompress } as const;
const encodingOf = (req: Request) => (req.get('Content-Encoding') || 'identity').trim().toLowerCase();

/**
 * The Content-Encodings every body reader undoes: gzip, deflate, br or identity; any other is
 * 415, whatever the runtime's zlib could also do (Node 24's parsers would take zstd), so the
 * rule is the same on every route and every Node. Runs before each body parser.
 */
export function encodingChecked(req: Request, _res: Response, next: NextFunction): void {
  const encoding = encodingOf(req);
  next(encoding === 'identity' || Object.hasOwn(DECODERS, encoding) ? undefined : unsupportedEncoding(req.get('Content-Encoding')!));
}

/** A streamed body (multipart imports) read as its Content-Encoding says, by the same rule. */
export function decodedBody(req: Request): Readable {
  const encoding = encodingOf(req);
  if (encoding === 'identity') return req;
  if (!Object.hasOwn(DECODERS, encoding)) throw unsupportedEncoding(req.get('Content-Encoding')!);
  return req.pipe(DECODERS[encoding as keyof typeof DECODERS]());
}

/** The 400 for a body that is not what its Content-Encoding says, as on the JSON routes. */
export function notSoEncoded(req: Request): AppError {
  return problem(
    'bad-request',
    `The request body is not valid ${(req.get('Content-Encoding') ?? '').trim().toLowerCase()} data, as its Content-Encoding says it is.`,
  );
}
