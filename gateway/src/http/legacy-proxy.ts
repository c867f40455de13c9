import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { Logger } from '@supply/kit';
import { errorHandler, problem } from './errors';

/** RFC 9110 hop-by-hop fields: they describe one connection, never the next. */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];
/** Marks answers that came from the previous deployment (RFC 9110 Via). */
export const PASSTHROUGH_VIA = '1.1 supply-gateway';

/** The hop-by-hop names a message lists, with those its Connection field adds. */
function hopByHop(connection: string | string[] | number | undefined): string[] {
  const named = String(connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  return [...HOP_BY_HOP, ...named];
}

/**
 * With LEGACY_UPSTREAM_URL set, API requests this service has no route for are forwarded to
 * the previous deployment as they are (streamed both ways, X-Request-Id passed on, hop-by-hop
 * fields dropped), so a tenant can move one endpoint at a time. The upstream authenticates
 * and meters them itself. Unreachable: 503; no answer within `timeoutMs`: 504.
 */
export function legacyPassthrough(options: { upstream: string; timeoutMs: number; logger: Logger }): RequestHandler {
  const answerError = errorHandler(options.logger);
  return createProxyMiddleware<Request, Response>({
    target: options.upstream,
    changeOrigin: true,
    xfwd: true,
    // Only the upstream's answer is timed: a slow client upload is not the upstream's fault.
    proxyTimeout: options.timeoutMs,
    pathFilter: (path) => /^\/[^/]+\/api\//.test(path),
    on: {
      proxyReq(proxyReq: ClientRequest, req: Request, res: Response) {
        // Node sets the outgoing connection's own Connection and framing.
        for (const name of hopByHop(req.headers.connection)) proxyReq.removeHeader(name);
        proxyReq.setHeader('X-Request-Id', String(res.locals.requestId ?? ''));
        proxyReq.setHeader('Via', PASSTHROUGH_VIA);
      },
      proxyRes(proxyRes: IncomingMessage) {
        for (const name of hopByHop(proxyRes.headers.connection)) delete proxyRes.headers[name];
        proxyRes.headers.via = [proxyRes.headers.via, PASSTHROUGH_VIA].filter(Boolean).join(', ');
      },
      error(err: Error & { code?: string }, req: IncomingMessage, res: ServerResponse | import('node:net').Socket) {
        if (!('setHeader' in res)) return void res.destroy();
        const timedOut = err.code === 'ECONNRESET' || err.code === 'ETIMEDOUT' || /timeout|socket hang up/i.test(err.message);
        const refused = timedOut
          ? problem('upstream-timeout', 'The previous deployment did not answer in time.')
          : problem('service-unavailable', 'The previous deployment cannot be reached right now; retry shortly.');
        options.logger.warn({ code: err.code, path: (req as Request).path }, 'legacy passthrough failed');
        answerError(refused, req as Request, res as unknown as Response, () => {});
      },
    },
  }) as unknown as RequestHandler;
}
