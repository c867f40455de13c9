import compression from 'compression';
import cors from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { constants } from 'node:zlib';

/** Helmet's defaults with a content security policy allowing this origin's scripts and inline styles. */
export const HELMET_OPTIONS: Parameters<typeof helmet>[0] = {
  contentSecurityPolicy: { directives: { 'script-src': ["'self'"], 'style-src': ["'self'", "'unsafe-inline'"] } },
};

/**
 * Helmet's security headers, worked out once: helmet's policy is the same for every request, so
 * running its dozen middlewares per request only recomputed the same values. Helmet also drops
 * `X-Powered-By`, which the app never sends.
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
  return (_req: Request, res: Response, next: NextFunction) => {
    for (let i = 0; i < headers.length; i++) res.setHeader(headers[i][0], headers[i][1]);
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
