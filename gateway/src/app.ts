import { randomUUID } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { runWithContext, type Logger } from '@supply/kit';
import { errorHandler, problem } from './http/errors';
import { replayRoute, type GatewayIdempotency, type Keyed } from './http/idempotency';
import { buildOpenApi } from './http/openapi';
import { PROBLEMS, type ProblemSlug } from './http/problems';
import { envelope, parseInput, type RouteDef } from './http/routes';

/** Runs before a route's handler: authentication and the two gates (before validation), or metering (after it). */
export type Guard = (route: RouteDef, req: Request, res: Response) => Promise<void>;

export interface AppOptions {
  logger: Logger;
  routes: RouteDef[];
  guard: Guard;
  /** Runs after validation, so a request refused by the guard or by validation never spends. */
  meter?: Guard;
  /** Undoes `meter` for a request the handler then refused (4xx/5xx). */
  refund?: Guard;
  /** Keeps the Idempotency-Key of routes declaring `idempotency: 'gateway'` (http/idempotency.ts). */
  idempotency?: GatewayIdempotency;
  /** Every dependency's readiness, by name. */
  readiness(): Promise<Record<string, boolean>>;
  bodyLimitKb: number;
  /** JSON bodies are small; files stream through their own parser. */
  jsonLimitKb?: number;
  /** Server-rendered pages (login, API Access), with their own HTML errors. */
  pages?: RequestHandler;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createApp(opts: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'extended');
  app.set('trust proxy', 'loopback');

  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('X-Request-Id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    runWithContext({ requestId }, next);
  });
  app.use(
    helmet({
      contentSecurityPolicy: { directives: { 'script-src': ["'self'"], 'style-src': ["'self'", "'unsafe-inline'"] } },
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await opts.readiness();
    const ready = Object.values(checks).every(Boolean);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  const openapi = buildOpenApi(opts.routes, { title: 'Supply Planning Service API', version: '1.0.0' });
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.get('/problems/:slug', (req, res, next) => {
    const slug = req.params.slug as ProblemSlug;
    if (!(slug in PROBLEMS)) return next();
    const { status, title } = PROBLEMS[slug];
    res.type('text/html').send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
        `<body><h1>${title}</h1><p>HTTP status ${status}. Problem type <code>/problems/${slug}</code> of the Supply Planning Service API.</p></body></html>`,
    );
  });

  if (opts.pages) app.use(opts.pages);

  const jsonLimit = `${opts.jsonLimitKb ?? opts.bodyLimitKb}kb`;
  const parsers = {
    json: express.json({ limit: jsonLimit }),
    form: express.urlencoded({ extended: true, limit: jsonLimit }),
  };
  const bodyParsersFor = (route: RouteDef) => {
    const accepts = route.accepts ?? (route.method === 'get' || route.method === 'delete' ? 'none' : 'json');
    const list = [];
    if (accepts.includes('json')) list.push(parsers.json);
    if (accepts.includes('form')) list.push(parsers.form);
    return list;
  };

  const methodsByPath = new Map<string, Set<string>>();
  for (const route of opts.routes) {
    (methodsByPath.get(route.path) ?? methodsByPath.set(route.path, new Set()).get(route.path)!).add(route.method.toUpperCase());
    app[route.method](
      route.path,
      (_req: Request, res: Response, next: NextFunction) => {
        res.locals.dialect = route.dialect;
        next();
      },
      ...bodyParsersFor(route),
      async (req: Request, res: Response, next: NextFunction) => {
        let metered = false;
        /** Set while this request holds a claimed Idempotency-Key it has not settled. */
        let claimed: Extract<Keyed, { kind: 'claimed' }> | null = null;
        try {
          await opts.guard(route, req, res);
          const query = parseInput(route.query, req.query);
          const body = route.body ? parseInput(route.body, req.body) : {};
          // After validation, before metering: see http/idempotency.ts.
          const keyed = (await opts.idempotency?.begin(route, req)) ?? null;
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
    );
  }
  // A known path with another method: 405 and the methods it does take.
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', ');
    app.all(path, (req: Request, res: Response, next: NextFunction) => {
      res.setHeader('Allow', allow);
      next(problem('method-not-allowed', `${req.method} is not allowed here; use ${allow}.`));
    });
  }
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(problem('not-found', `No route for ${req.method} ${req.path}.`));
  });
  app.use(errorHandler(opts.logger));
  return app;
}
