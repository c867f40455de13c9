import compression from 'compression';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { constants } from 'node:zlib';
import { isApiPath } from './layers';

/** Helmet's defaults with a content security policy allowing this origin's scripts and inline styles. */
export const HELMET_OPTIONS: Parameters<typeof helmet>[0] = {
  contentSecurityPolicy: { directives: { 'script-src': ["'self'"], 'style-src': ["'self'", "'unsafe-inline'"] } },
};

/**
 * What a JSON answer needs, and no more (OWASP's REST Security Cheat Sheet): nothing in it may
 * run or load anything, it may not be framed or sniffed as another type, HTTPS only, no
 * referrer. The rest of helmet's set (cross-origin isolation, download and DNS prefetch
 * controls, the legacy XSS filter switch) concerns documents a browser renders.
 */
export const API_SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
];

/**
 * Security headers, worked out once: API answers (`/{tenant}/api/...`) get
 * API_SECURITY_HEADERS, everything else (pages, docs, health) helmet's set, computed at start
 * since helmet's policy is the same for every request (running its dozen middlewares per request
 * only recomputed the same values). Helmet also drops `X-Powered-By`, which the app never sends.
 */
export function securityHeaders(options = HELMET_OPTIONS): RequestHandler {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader(name: string, value: string) {
      headers.push([name, value]);
    },
    removeHeader() {},
  };
  let finished = false;
  helmet(options)({} as Request, recorder as unknown as Response, () => (finished = true));
  // helmet answers synchronously; a version that did not would leave the headers unknown here.
  if (!finished || headers.length === 0) throw new Error('helmet did not settle its headers synchronously');
  return (req: Request, res: Response, next: NextFunction) => {
    const set = isApiPath(req.path) ? API_SECURITY_HEADERS : headers;
    for (let i = 0; i < set.length; i++) res.setHeader(set[i][0], set[i][1]);
    next();
  };
}

/** Text answers worth compressing; images, archives and anything already encoded are sent as they are. */
const COMPRESSIBLE = /^(application\/(?:[\w.+-]*\+)?json|text\/csv|application\/javascript|text\/html|text\/css)\b/i;

/** gzip or brotli (as the client prefers) for JSON, CSV and page answers of at least `thresholdBytes`. */
export function compressAnswers(thresholdBytes: number): RequestHandler {
  return compression({
    threshold: thresholdBytes,
    // gzip's fastest level: a 1.8 MB page of 5,000 sales in 2-3 ms as 48 KB, against 10-17 ms as
    // 38 KB at the default level; brotli stays at the library's quality 4.
    level: constants.Z_BEST_SPEED,
    filter: (req: Request, res: Response) => {
      if (res.getHeader('Content-Encoding')) return false;
      return COMPRESSIBLE.test(String(res.getHeader('Content-Type') ?? '')) && compression.filter(req, res);
    },
  });
}

/** Headers a browser client may send cross-origin, and those it may read from the answer. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Idempotency-Key', 'X-Request-Id', 'X-Requested-With'];
const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Credits-Remaining',
  'Retry-After',
  'Idempotent-Replayed',
  'Location',
  'Deprecation',
  'Sunset',
];

/**
 * CORS for the listed origins only (bearer tokens, never cookies: no credentials); a
 * preflight is answered 204 and cached by the browser for `maxAgeSeconds`.
 */
export function corsFor(origins: readonly string[], maxAgeSeconds: number): RequestHandler {
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  return cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin.toLowerCase())),
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: maxAgeSeconds,
    optionsSuccessStatus: 204,
  });
}
