/**
 * The first middleware of every request: its id (the client's valid `X-Request-Id`, else a
 * new one, echoed), the request context every later line and call carries, and when the
 * answer ends, exactly one access log line and the HTTP metrics. Labels and the `route`
 * field are route templates; the raw path never becomes a label.
 */
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  httpServerSpan,
  runWithContext,
  secondsSince,
  type Logger,
  type Metrics,
  type RejectionReason,
  type RequestContext,
} from '@supply/kit';
import type { ProblemSlug } from './problems';
import type { RouteDef } from './routes';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Route label of a request no route took (404s, probes of random paths). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The refusals an operator watches, by the problem the client was answered with. */
const REASON_OF_PROBLEM: Partial<Record<ProblemSlug, RejectionReason>> = {
  unauthenticated: 'auth',
  'insufficient-scope': 'scope',
  'insufficient-permission': 'scope',
  forbidden: 'scope',
  'rate-limited': 'rate_limit',
  'credits-exhausted': 'credits',
  'validation-failed': 'validation',
  'invalid-query': 'validation',
  'bad-request': 'validation',
};

/** Which meter limit refused a request, for `supply_metering_limit_rejections_total`. */
const LIMIT_OF_PROBLEM: Partial<Record<ProblemSlug, string>> = { 'rate-limited': 'rate', 'credits-exhausted': 'credits' };

export function rejectionReasonOf(problem: ProblemSlug | undefined): RejectionReason | undefined {
  return problem ? REASON_OF_PROBLEM[problem] : undefined;
}

/** The template of the route that answered, never the path as sent. */
function routeOf(req: Request, res: Response): string {
  const declared = res.locals.route as RouteDef | undefined;
  if (declared) return declared.path;
  // A known path asked with a method it does not take (app.ts answers 405).
  if (typeof res.locals.routePath === 'string') return res.locals.routePath;
  const matched = (req as Request & { route?: { path?: unknown } }).route?.path;
  return matched === undefined ? UNMATCHED_ROUTE : `${req.baseUrl ?? ''}${String(matched)}`;
}

export function observeRequests(opts: { logger: Logger; metrics?: Metrics }): RequestHandler {
  const { logger, metrics } = opts;
  // Each meter limit shows as 0 until it first refuses, so its rate and alerts have a series from the start.
  for (const limit of new Set(Object.values(LIMIT_OF_PROBLEM))) metrics?.limitRejections.inc({ limit }, 0);
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const incoming = req.get('X-Request-Id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    // The guard fills in tenant and principal on this same object.
    const ctx: RequestContext = { requestId };
    // Callbacks that lose the ambient context pass this one explicitly (http/context.ts).
    res.locals.context = ctx;
    let bytes = 0;
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    const count = (chunk: unknown, encoding: unknown) => {
      if (typeof chunk === 'string')
        bytes += Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      else if (chunk instanceof Uint8Array) bytes += chunk.byteLength;
    };
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      count(chunk, rest[0]);
      return write(chunk, ...rest);
    }) as Response['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') count(chunk, rest[0]);
      return end(chunk, ...rest);
    }) as Response['end'];

    metrics?.httpInFlight.inc();
    // eslint-disable-next-line prefer-const -- assigned once, after `finish` that reads it is defined
    let endSpan: ((route: string, status: number) => void) | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      // An answer cut short (client gone, connection reset) never got its status out.
      const status = res.writableFinished ? res.statusCode : 499;
      const route = routeOf(req, res);
      const seconds = secondsSince(started);
      const problem = res.locals.refusal as ProblemSlug | undefined;
      const reason = rejectionReasonOf(problem);
      if (metrics) {
        const labels = { route, method: req.method, status: String(status) };
        metrics.httpInFlight.dec();
        metrics.httpRequests.inc(labels);
        metrics.httpDuration.observe(labels, seconds);
        if (reason) metrics.httpRejections.inc({ reason, route });
        const limit = problem && LIMIT_OF_PROBLEM[problem];
        if (limit) metrics.limitRejections.inc({ limit });
        const metered = res.locals.metering as { cost: number; refunded?: boolean } | undefined;
        const kind = (res.locals.route as RouteDef | undefined)?.access;
        if (metered && !metered.refunded && metered.cost > 0 && kind && 'cost' in kind) {
          metrics.creditsSpent.inc({ kind: String(kind.cost) }, metered.cost);
        }
      }
      endSpan?.(route, status);
      const principal = res.locals.principal as { tenant?: string; token_id?: number } | undefined;
      logger.info(
        {
          access: true,
          request_id: requestId,
          tenant: principal?.tenant ?? ctx.tenant,
          token_id: principal?.token_id,
          method: req.method,
          route,
          status,
          duration_ms: Math.round(seconds * 1e6) / 1e3,
          bytes,
          ...(problem && { reason: problem }),
        },
        'http request',
      );
    };
    res.once('finish', finish);
    res.once('close', finish);
    endSpan = httpServerSpan(req.method, req.headers, () => runWithContext(ctx, next));
  };
}
