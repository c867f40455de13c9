import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger, Metrics } from '@supply/kit';
import {
  acceptsOf,
  assertBodyType,
  bodyChecked,
  decodablePath,
  encodingChecked,
  possibleTenant,
  queryKeysChecked,
  verifyFormKeys,
  verifyJsonDepth,
} from './http/edge';
import { DEFAULT_RETRY_AFTER_SECONDS, errorHandler, problem } from './http/errors';
import { replayRoute, type GatewayIdempotency, type Keyed } from './http/idempotency';
import { legacyPassthrough } from './http/legacy-proxy';
import { dispatch, RouteTable } from './http/dispatch';
import { fixedPaths, inSequence, pagesOnly } from './http/layers';
import { buildOpenApi } from './http/openapi';
import { observeRequests } from './http/observe';
import { envelope, parseInput, type RouteDef } from './http/routes';
import { compressAnswers, corsFor, securityHeaders } from './http/transport';
import { docsPages } from './web/docs';

/** Runs before a route's handler: authentication and the two gates (before validation), or metering (after it). */
export type Guard = (route: RouteDef, req: Request, res: Response) => Promise<void>;

export interface AppOptions {
  logger: Logger;
  /** HTTP families of the process registry; absent in tests that need none. */
  metrics?: Metrics;
  routes: RouteDef[];
  guard: Guard;
  /** Runs after validation, so a request refused by the guard or by validation never spends. */
  meter?: Guard;
  /** Undoes `meter` for a request the handler then refused (4xx/5xx). */
  refund?: Guard;
  /** Keeps the Idempotency-Key of routes declaring `idempotency: 'gateway'` (http/idempotency.ts). */
  idempotency?: GatewayIdempotency;
  /** What this process needs to serve, by name: all true makes /readyz 200. */
  readiness(): Promise<Record<string, boolean>>;
  /** Peer services in other processes, reported on /readyz but not deciding it (their routes answer 503 meanwhile). */
  peers?(): Promise<Record<string, boolean>>;
  bodyLimitKb: number;
  /** JSON bodies are small; files stream through their own parser. */
  jsonLimitKb?: number;
  /** Browser origins allowed cross-origin (CORS off when unset or empty), and how long a preflight is cached. */
  cors?: { origins: readonly string[]; maxAgeSeconds: number };
  /** Smallest answer compressed (bytes); unset: 1024. */
  compressionThresholdBytes?: number;
  /** Forwards API requests no route takes to the previous deployment (http/legacy-proxy.ts). */
  legacyUpstream?: { url: string; timeoutMs: number };
  /** Server-rendered pages (login, API Access), with their own HTML errors. */
  pages?: RequestHandler;
}

export function createApp(opts: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  app.set('trust proxy', 'loopback');

  // The edge every request passes, as one Express layer (http/layers.ts).
  app.use(
    inSequence(
      observeRequests({ logger: opts.logger, metrics: opts.metrics }),
      decodablePath,
      queryKeysChecked,
      securityHeaders(),
      ...(opts.cors && opts.cors.origins.length > 0 ? [corsFor(opts.cors.origins, opts.cors.maxAgeSeconds)] : []),
      compressAnswers(opts.compressionThresholdBytes ?? 1024),
    ),
  );

  const openapi = buildOpenApi(opts.routes);
  // Health, readiness and the OpenAPI document, looked up by path instead of three Express routes.
  const fixed = fixedPaths({
    '/healthz': (_req, res) => {
      res.json({ status: 'ok' });
    },
    '/readyz': async (_req, res) => {
      const [checks, services] = await Promise.all([opts.readiness(), opts.peers?.()]);
      const ready = Object.values(checks).every(Boolean);
      if (!ready) res.setHeader('Retry-After', String(DEFAULT_RETRY_AFTER_SECONDS));
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks, ...(services && { services }) });
    },
    '/openapi.json': (_req, res) => {
      res.json(openapi);
    },
  });

  const jsonLimit = `${opts.jsonLimitKb ?? opts.bodyLimitKb}kb`;
  const parsers = {
    // The nesting is measured on the raw text, so a body too deep is never parsed.
    json: express.json({ limit: jsonLimit, verify: verifyJsonDepth }),
    form: express.urlencoded({ extended: true, limit: jsonLimit, verify: verifyFormKeys }),
  };
  const bodyParsersFor = (route: RouteDef) => {
    const accepts = acceptsOf(route);
    const list = [];
    if (accepts.includes('json') || accepts.includes('form')) list.push(encodingChecked);
    if (accepts.includes('json')) list.push(parsers.json, bodyChecked);
    if (accepts.includes('form')) list.push(parsers.form);
    return list;
  };

  // Every API route in one lookup (http/dispatch.ts) rather than one Express layer each.
  const table = new RouteTable<RequestHandler[]>();
  for (const route of opts.routes) {
    table.add(route.method, route.path, [
      (_req: Request, res: Response, next: NextFunction) => {
        res.locals.dialect = route.dialect;
        res.locals.route = route;
        next();
      },
      ...bodyParsersFor(route),
      async (req: Request, res: Response, next: NextFunction) => {
        let metered = false;
        /** Set while this request holds a claimed Idempotency-Key it has not settled. */
        let claimed: Extract<Keyed, { kind: 'claimed' }> | null = null;
        try {
          await opts.guard(route, req, res);
          assertBodyType(acceptsOf(route), req);
          const query = parseInput(route.query, req.query);
          const body = route.body ? parseInput(route.body, req.body) : {};
          // After validation, before metering: see http/idempotency.ts.
          const keyed = (await opts.idempotency?.begin(route, req, res)) ?? null;
          if (keyed?.kind === 'replay') {
            await opts.meter?.(replayRoute(route), req, res);
            opts.idempotency!.replay(res, keyed.answer);
            return;
          }
          claimed = keyed;
          await opts.meter?.(route, req, res);
          metered = true;
          const reply = await route.handler({ query, body, params: req.params as Record<string, string>, req, res });
          if (reply.kind === 'sent') {
            // An answer the handler wrote itself cannot be kept: free the key.
            if (claimed) await opts.idempotency!.release(claimed);
            return;
          }
          const status = reply.status ?? route.successStatus ?? 200;
          if (status >= 400) await opts.refund?.(route, req, res);
          for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
          const payload = reply.kind === 'envelope' ? envelope(req, reply) : reply.body;
          if (claimed) {
            const settling = claimed;
            claimed = null;
            await opts.idempotency!.settle(settling, status, reply.headers ?? {}, payload);
          }
          res.status(status).json(payload);
        } catch (err) {
          // A failed first request frees its key, so the client may retry with it.
          if (claimed) await opts.idempotency!.release(claimed);
          // A request refused after metering (unknown id, conflict, unavailable) spends nothing.
          if (metered) await opts.refund?.(route, req, res);
          next(err);
        }
      },
    ]);
  }
  // Everything before the API's routes, and the routes, as one layer: every other path starts with a
  // tenant (API routes and pages alike).
  app.use(inSequence(fixed, pagesOnly(docsPages()), possibleTenant, ...(opts.pages ? [pagesOnly(opts.pages)] : []), dispatch(table)));
  // Before the 405s: a method this service lacks on a known path may be one the old deployment has.
  if (opts.legacyUpstream)
    app.use(legacyPassthrough({ upstream: opts.legacyUpstream.url, timeoutMs: opts.legacyUpstream.timeoutMs, logger: opts.logger }));
  // A known path with another method: 405 and the methods it does take.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const known = table.methodsAt(req.path);
    if (!known) return next();
    const allow = [...known.methods, ...(known.methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    res.setHeader('Allow', allow);
    res.locals.routePath = known.path;
    next(problem('method-not-allowed', `${req.method} is not allowed here; use ${allow}.`));
  });
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(problem('not-found', `No route for ${req.method} ${req.path}.`));
  });
  app.use(errorHandler(opts.logger));
  return app;
}
