/**
 * Fewer Express layers on the request path. Every layer a request enters costs a router step
 * (a `next` closure, path trimming, about half a kilobyte of garbage), and most of the edge's
 * middleware runs on every request: a cached API read entered about ten layers before its
 * handler.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware run one after another as a single layer, as Express would run them as separate
 * ones: each calls the next through `next()`, `next(err)` skips the rest and goes to the error
 * handlers, and a throw or a rejected promise counts as `next(err)`.
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  if (handlers.length === 1) return handlers[0]!;
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) return next(err);
      const handler = handlers[index++];
      if (handler === undefined) return next();
      let result: unknown;
      try {
        result = handler(req, res, step);
      } catch (thrown) {
        return next(thrown ?? new Error('a middleware threw a null value'));
      }
      if (result instanceof Promise)
        result.catch((rejected: unknown) => next(rejected ?? new Error('a middleware rejected with no reason')));
    };
    step();
  };
}

/** `/{tenant}/api/...`: the API's own paths, which no page route serves. */
export function isApiPath(path: string): boolean {
  const end = path.indexOf('/', 1);
  return end !== -1 && path.startsWith('/api/', end);
}

/** A page router that API requests pass by without Express trying each of its routes. */
export function pagesOnly(router: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => (isApiPath(req.path) ? next() : router(req, res, next));
}

/**
 * GET (and HEAD) handlers of fixed paths, found by one lookup, matched as Express matches a route
 * by default: case-insensitive, with or without a trailing slash. Other paths and methods pass on.
 */
export function fixedPaths(handlers: Record<string, RequestHandler>): RequestHandler {
  const byPath = new Map(Object.entries(handlers).map(([path, handler]) => [path.toLowerCase(), handler]));
  const longest = Math.max(...[...byPath.keys()].map((path) => path.length)) + 1;
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path.length > longest) return next();
    const handler = byPath.get((path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase());
    return handler ? handler(req, res, next) : next();
  };
}
