/**
 * The API's routes as one lookup instead of one Express layer each. Express tries its layers
 * in order, running a compiled path pattern per route until one matches, so a request for
 * the hundredth route paid for ninety-nine patterns; here the path is split once and walked
 * down a tree of its segments. The answer is the one Express would give for the same routes
 * in the same order (checked against Express itself in dispatch.test.ts):
 *
 * - literal segments match case-insensitively, as Express's default routing does;
 * - `:name` matches one non-empty segment and is percent-decoded into `req.params`;
 * - one trailing slash is allowed (`/uoms/` is `/uoms`);
 * - HEAD is answered by the GET route;
 * - where several routes match a path, the first declared wins.
 *
 * Route paths may use only literal segments and `:name` parameters: anything else in
 * Express's path syntax throws when the table is built, so a new route cannot silently route
 * differently here than it would in Express.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { problem } from './errors';

interface Entry<T> {
  /** Declaration order: the first match wins, as in Express. */
  index: number;
  method: string;
  path: string;
  value: T;
  /** The parameter's name at each segment position (undefined for literals). */
  names: (string | undefined)[];
  /** Every route ending where this one does (the same path, other methods, among them). */
  siblings: Entry<T>[];
}

interface Node<T> {
  literals: Map<string, Node<T>>;
  param: Node<T> | undefined;
  /** Routes whose path ends at this node. */
  ends: Entry<T>[];
}

const node = <T>(): Node<T> => ({ literals: new Map(), param: undefined, ends: [] });

const PARAM = /^:([A-Za-z_$][\w$]*)$/;
/** Characters with a meaning in Express's path syntax beyond a plain `:name` segment. */
const SYNTAX = /[:*?{}()[\]+!\\]/;

export interface Match<T> {
  value: T;
  params: Record<string, string>;
}

export class RouteTable<T> {
  readonly #root: Node<T> = node();
  #count = 0;

  add(method: string, path: string, value: T): void {
    if (!path.startsWith('/')) throw new Error(`route path ${path} must start with /`);
    const names: (string | undefined)[] = [];
    let at = this.#root;
    for (const segment of path.slice(1).split('/')) {
      const param = PARAM.exec(segment);
      if (param) {
        names.push(param[1]);
        at = at.param ??= node();
      } else {
        if (segment === '' || SYNTAX.test(segment)) throw new Error(`route path ${path}: only literal and :name segments are supported`);
        names.push(undefined);
        const literal = segment.toLowerCase();
        let next = at.literals.get(literal);
        if (!next) at.literals.set(literal, (next = node()));
        at = next;
      }
    }
    at.ends.push({ index: this.#count++, method: method.toUpperCase(), path, value, names, siblings: at.ends });
  }

  /** The first route declared for this method (HEAD: GET) and path, with its parameters. */
  match(method: string, pathname: string): Match<T> | undefined {
    const segments = segmentsOf(pathname);
    if (!segments) return undefined;
    const wanted = method === 'HEAD' ? headOrGet : (e: Entry<T>) => e.method === method;
    const found = this.#first(this.#root, segments, 0, wanted, undefined);
    if (!found) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < found.names.length; i++) {
      const name = found.names[i];
      if (name !== undefined) params[name] = decodeParam(segments[i]!);
    }
    return { value: found.value, params };
  }

  /** The route template a path falls under whatever its method (the first declared), and every method it takes. */
  methodsAt(pathname: string): { path: string; methods: string[] } | undefined {
    const segments = segmentsOf(pathname);
    if (!segments) return undefined;
    const found = this.#first(this.#root, segments, 0, () => true, undefined);
    if (!found) return undefined;
    const methods = new Set(found.siblings.filter((e) => e.path === found.path).map((e) => e.method));
    return { path: found.path, methods: [...methods] };
  }

  #first(at: Node<T>, segments: string[], i: number, wanted: (e: Entry<T>) => boolean, best: Entry<T> | undefined): Entry<T> | undefined {
    if (i === segments.length) {
      for (const e of at.ends) if (wanted(e) && (!best || e.index < best.index)) best = e;
      return best;
    }
    const segment = segments[i]!;
    const literal = at.literals.get(segment) ?? (at.literals.size > 0 ? at.literals.get(asciiLower(segment)) : undefined);
    if (literal) best = this.#first(literal, segments, i + 1, wanted, best);
    if (at.param && segment !== '') best = this.#first(at.param, segments, i + 1, wanted, best);
    return best;
  }
}

function headOrGet(e: { method: string }): boolean {
  return e.method === 'HEAD' || e.method === 'GET';
}

/** A path's segments, one trailing slash dropped; undefined for a path that is not absolute. */
function segmentsOf(pathname: string): string[] | undefined {
  if (pathname.charCodeAt(0) !== 47 /* / */) return undefined;
  const end = pathname.length > 1 && pathname.endsWith('/') ? pathname.length - 1 : pathname.length;
  return pathname.slice(1, end).split('/');
}

/** Lower case for ASCII letters only, as a non-Unicode case-insensitive pattern compares them. */
function asciiLower(s: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\x7f]*$/.test(s) ? s.toLowerCase() : s;
}

function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw problem('bad-request', 'The request path holds a malformed percent-escape (each % must start a UTF-8 byte like %2F).');
  }
}

/**
 * Runs the matched route's handlers in order, as an Express route would: an error (thrown,
 * passed to `next`, or a rejected promise) goes on to the app's error handlers, and a path
 * no route takes goes on to the layers after this one.
 */
export function dispatch(table: RouteTable<RequestHandler[]>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    let found: Match<RequestHandler[]> | undefined;
    try {
      found = table.match(req.method, req.path);
    } catch (err) {
      return next(err);
    }
    if (!found) return next();
    req.params = found.params;
    const chain = found.value;
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) return next(err === 'route' ? undefined : err);
      const handler = chain[i++];
      if (!handler) return next();
      try {
        const result = handler(req, res, step) as unknown;
        if (result instanceof Promise) result.then(undefined, (e: unknown) => step(e ?? new Error('handler rejected')));
      } catch (e) {
        step(e);
      }
    };
    step();
  };
}
