/**
 * Checks every request passes before a route handler sees it: a path that decodes, a
 * possible tenant, no `__proto__` query or body key, a body type the route reads, and JSON
 * no deeper than MAX_JSON_DEPTH. Each refusal is a 4xx answer, never a 5xx.
 */
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { NextFunction, Request, Response } from 'express';
import { addFieldError, type AppError, fieldErrors, MAX_JSON_DEPTH, MAX_TENANT_LENGTH, scanJson, TENANT_SLUG, ValidationError } from '@supply/kit';
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
      problem('not-found', `No tenant by that name: a tenant is 1 to ${MAX_TENANT_LENGTH} lowercase letters, digits and dashes, not starting with a dash.`),
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
  throw problem('unsupported-media-type', `This endpoint reads ${types.join(' or ')}; the request body is ${sent ? sent.split(';')[0]!.trim() : 'of no declared Content-Type'}.`);
}

/**
 * After JSON parsing, before any handler or schema: 400 for a body nested deeper than
 * MAX_JSON_DEPTH; 422 for a key named `__proto__` (no endpoint takes one, and schemas of
 * free-form maps would drop it silently).
 */
export function bodyChecked(req: Request, _res: Response, next: NextFunction): void {
  const scan = scanJson(req.body);
  if (scan.tooDeep) return next(problem('bad-request', JSON_DEPTH_DETAIL));
  if (scan.protoKeys.length > 0) {
    const fields = fieldErrors();
    for (const path of scan.protoKeys) addFieldError(fields, path, `The ${path} field is prohibited.`);
    return next(new ValidationError(fields));
  }
  next();
}

export const JSON_DEPTH_DETAIL = `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels, the most this API reads.`;

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
  return problem('bad-request', `The request body is not valid ${(req.get('Content-Encoding') ?? '').trim().toLowerCase()} data, as its Content-Encoding says it is.`);
}
