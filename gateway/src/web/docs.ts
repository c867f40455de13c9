import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';
import { PROBLEMS, type ProblemSlug } from '../http/problems';
import { esc } from './html';

/**
 * Scalar's standalone bundle, served by the gateway itself: the page works offline and under
 * `script-src 'self'`. The build copies it beside the compiled code (the package and its
 * framework dependencies are build-time only); from sources it comes from the installed package.
 */
const SCALAR_BUNDLE = ((): string => {
  const built = fileURLToPath(new URL('./assets/scalar.js', import.meta.url));
  if (existsSync(built)) return built;
  return join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js');
})();
const INIT = readFileSync(new URL('./assets/docs-init.js', import.meta.url), 'utf8');

/** What each problem type means and what a client does about it (the page at `/problems/<slug>`). */
export const PROBLEM_HELP: Record<ProblemSlug, string> = {
  'bad-request':
    'The request could not be read: the body is not valid JSON, or it is malformed. Fix the request; retrying it unchanged fails again.',
  'invalid-query':
    'A query parameter names something this endpoint does not know: an unknown filter, sort or include. The detail lists what the endpoint takes.',
  unauthenticated:
    'No bearer token, or one that is unknown, expired, revoked or of another workspace. Create a token on the API Access page or with POST /{tenant}/api/v1/tokens.',
  'credits-exhausted':
    "The workspace's credits for this month are spent. They renew on the first day of next month (UTC); GET /{tenant}/api/v1/credits shows the balance.",
  'insufficient-scope': 'The token lacks the scope this endpoint requires (the detail names it). Create a token with that scope.',
  'insufficient-permission':
    'The user who created the token lacks the module permission this endpoint needs (View for reads, Planner for writes). Ask an administrator to grant it.',
  forbidden: 'The request is not allowed for this workspace, for example because its Public API module is disabled.',
  'not-found': 'No such record in this workspace, or no such route. Ids of other workspaces look exactly like unknown ids.',
  'method-not-allowed': 'The path exists but not with this method; the Allow header lists the methods it takes.',
  'not-acceptable': 'The Accept header asks for a representation this endpoint cannot produce; ask for application/json.',
  conflict:
    'The request conflicts with the current state: a request with the same Idempotency-Key is still unanswered, or a record it names changed. Retry later or with fresh data.',
  gone: 'The route was removed at its announced sunset. The detail names its replacement.',
  'headers-too-large':
    'The request headers (cookies, tokens and all) are larger than this server accepts, 16 KB in all. Send fewer or smaller headers.',
  'payload-too-large': 'The body is larger than this endpoint accepts. Split the data into several requests.',
  'unsupported-media-type': 'The body has a content type this endpoint does not take (JSON, or multipart for file imports).',
  'validation-failed':
    'The request was understood but its values are invalid. Most validation errors come as a 422 with errors per field instead.',
  'rate-limited':
    'Too many requests in the rate window. Wait the Retry-After seconds; the RateLimit header shows what is left of the window.',
  'internal-error': 'The server failed to complete the request. Quote the request_id when reporting it.',
  'service-unavailable':
    'A service behind the API cannot take the request right now. Retry after Retry-After seconds when given, or shortly.',
  'upstream-timeout':
    'A service behind the API did not answer in time. The request may or may not have taken effect; retry with the same Idempotency-Key where the endpoint takes one.',
};

const PAGE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1d2433}code{background:#f0f1f4;padding:0 .25rem}';

/** `GET /docs` (the interactive reference), its two scripts, and `GET /problems/<slug>`. */
export function docsPages(): Router {
  const router = express.Router();
  router.get('/docs', (_req, res) => {
    res
      .type('text/html')
      .set('Cache-Control', 'no-cache')
      .send(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
          '<title>Supply Planning Service API reference</title><link rel="icon" href="data:,"></head><body><div id="reference"></div>' +
          '<script src="/docs/assets/scalar.js"></script><script src="/docs/assets/init.js"></script></body></html>',
      );
  });
  router.get('/docs/assets/scalar.js', (_req, res, next) => {
    res.sendFile(
      SCALAR_BUNDLE,
      { maxAge: '1h', headers: { 'Content-Type': 'application/javascript; charset=utf-8' } },
      (err) => err && next(err),
    );
  });
  router.get('/docs/assets/init.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-cache').send(INIT);
  });
  router.get('/problems/:slug', (req, res, next) => {
    const slug = req.params.slug as ProblemSlug;
    if (!Object.hasOwn(PROBLEMS, slug)) return next();
    const { status, title } = PROBLEMS[slug];
    res
      .type('text/html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><style>${PAGE_STYLE}</style></head>` +
          `<body><h1>${esc(title)}</h1><p>HTTP status <strong>${status}</strong>. Problem type <code>/problems/${esc(slug)}</code> of the Supply Planning Service API.</p>` +
          `<p>${esc(PROBLEM_HELP[slug] ?? title)}</p>` +
          '<p>Answers of this type are <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, <code>instance</code> and <code>request_id</code>. ' +
          'See the <a href="/docs">API reference</a>.</p></body></html>',
      );
  });
  return router;
}
