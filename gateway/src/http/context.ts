import type { Response } from 'express';
import type { RequestContext } from '@supply/kit';

/**
 * The call context of this request (its id, and once the guard has run its tenant and
 * principal), kept on the response by app.ts. Code that calls a service from a stream or
 * event callback passes it explicitly: the ambient context does not follow an event emitter.
 */
export function requestContext(res: Response): RequestContext {
  const ctx = res.locals.context as RequestContext | undefined;
  if (!ctx) throw new Error('no request context: app.ts sets one for every request');
  return ctx;
}
