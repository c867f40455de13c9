import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { allRoutes } from '../routes';
import { dispatch, RouteTable } from './dispatch';

/** Every route the gateway declares, in its order (handlers are never called). */
const ROUTES = allRoutes(new Proxy({}, { get: () => undefined }) as never, { now: () => new Date(), revoked: () => {} }).map((r) => ({
  method: r.method,
  path: r.path,
}));
const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS'];

/** What a raw request (path sent as is, never normalised by a client) was answered with. */
function send(base: string, method: string, path: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method }, (res) => {
      res.resume();
      res.on('end', () => resolve({ express: String(res.headers['x-express'] ?? ''), table: String(res.headers['x-table'] ?? '') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Paths near every route: as declared, with odd parameters, other cases, slashes and segments added or taken away. */
function pathsNear(path: string): string[] {
  const fills = ['demo', '42', 'a%20b', 'caf%C3%A9', 'x.y', 'search', 'runs', 'HeLLo', '%2F'];
  const out = new Set<string>();
  const segments = path.split('/');
  for (let k = 0; k < fills.length; k++) {
    const filled = segments.map((s, i) => (s.startsWith(':') ? (i === 1 ? 'demo' : fills[(k + i) % fills.length]!) : s)).join('/');
    out.add(filled);
    out.add(`${filled}/`);
    out.add(`${filled}//`);
    out.add(`${filled}/extra`);
    out.add(filled.toUpperCase().replace(/%[0-9A-F]{2}/g, (m) => m));
    out.add(filled.slice(0, filled.lastIndexOf('/')));
    out.add(filled.replace('/api/', '//api/'));
    out.add(segments.map((s) => (s.startsWith(':') ? '' : s)).join('/'));
  }
  return [...out];
}

describe('the route table (http/dispatch.ts) against Express routing', () => {
  let server: Server;
  let base: string;

  before(async () => {
    const table = new RouteTable<number>();
    for (const [i, r] of ROUTES.entries()) table.add(r.method, r.path, i);
    const app = express();
    const encode = (value: unknown) => encodeURIComponent(JSON.stringify(value));
    app.use((req: Request, res: Response, next: NextFunction) => {
      const found = table.match(req.method, req.path);
      const known = table.methodsAt(req.path);
      res.setHeader('X-Table', encode({ route: found?.value ?? null, params: found?.params ?? null, allow: known?.methods ?? null }));
      next();
    });
    for (const [i, r] of ROUTES.entries()) {
      app[r.method](r.path, (req: Request, res: Response) => {
        res.setHeader('X-Express', encode({ route: i, params: { ...req.params }, allow: null }));
        res.end();
      });
    }
    const methodsByPath = new Map<string, string[]>();
    for (const r of ROUTES) (methodsByPath.get(r.path) ?? methodsByPath.set(r.path, []).get(r.path)!).push(r.method.toUpperCase());
    for (const [path, methods] of methodsByPath) {
      app.all(path, (_req: Request, res: Response) => {
        res.setHeader('X-Express', encode({ route: null, params: null, allow: [...new Set(methods)] }));
        res.end();
      });
    }
    app.use((_req: Request, res: Response) => {
      res.setHeader('X-Express', encode({ route: null, params: null, allow: null }));
      res.end();
    });
    app.use((_err: unknown, _req: Request, res: Response, _next: NextFunction) => {
      res.setHeader('X-Express', encode({ error: true }));
      res.end();
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => server.close());

  it('picks the route Express picks, with the same parameters, for every method on paths near every route', async () => {
    assert.ok(ROUTES.length > 50, `only ${ROUTES.length} routes`);
    const paths = new Set(ROUTES.flatMap((r) => pathsNear(r.path)));
    for (const extra of ['/', '/demo', '/demo/api', '/demo/api/v1', '/demo/api/v1/', '/nope/api/v1/uoms/1/2/3']) paths.add(extra);
    let compared = 0;
    let matched = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        const answer = await send(base, method, path);
        const express = JSON.parse(decodeURIComponent(answer.express!));
        const table = JSON.parse(decodeURIComponent(answer.table!));
        if (express.error) continue; // a malformed escape: the app refuses it before routing (edge.ts)
        if (express.route !== null) {
          assert.deepEqual(
            { route: table.route, params: table.params },
            { route: express.route, params: express.params },
            `${method} ${path}`,
          );
          matched++;
        } else {
          assert.equal(table.route, null, `${method} ${path}: Express took no route`);
          assert.deepEqual(table.allow, express.allow, `${method} ${path}: the methods the path takes`);
        }
        compared++;
      }
    }
    assert.ok(matched > 500, `only ${matched} of ${compared} requests matched a route`);
  });

  it('refuses, when the table is built, a path in any syntax but literal and :name segments', () => {
    for (const path of ['/:tenant/files/*rest', '/:tenant/a{/:b}', '/:tenant/a/:b?', '/a//b', 'a/b', '/:tenant/(x)']) {
      assert.throws(() => new RouteTable<number>().add('get', path, 0), /must start with|only literal/, path);
    }
  });

  it('runs a route handlers in order and hands errors, thrown or rejected, to the next error handler', async () => {
    const table = new RouteTable<RequestHandler[]>();
    const calls: string[] = [];
    table.add('get', '/:tenant/ok', [
      (_req, _res, next) => {
        calls.push('first');
        next();
      },
      (req, res) => {
        calls.push('second');
        res.json({ tenant: req.params.tenant });
      },
    ]);
    table.add('get', '/:tenant/thrown', [
      () => {
        throw new Error('thrown');
      },
    ]);
    table.add('get', '/:tenant/rejected', [
      async () => {
        throw new Error('rejected');
      },
    ]);
    const app = express();
    app.use(dispatch(table));
    app.use((_req: Request, res: Response) => void res.status(404).json({ error: 'none' }));
    app.use((err: Error, _req: Request, res: Response, _next: NextFunction) => void res.status(500).json({ error: err.message }));
    const local = createServer(app);
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(local.address() as AddressInfo).port}`;
    try {
      assert.deepEqual(await (await fetch(`${url}/caf%C3%A9/ok`)).json(), { tenant: 'café' });
      assert.deepEqual(calls, ['first', 'second']);
      assert.deepEqual(await (await fetch(`${url}/demo/thrown`)).json(), { error: 'thrown' });
      assert.deepEqual(await (await fetch(`${url}/demo/rejected`)).json(), { error: 'rejected' });
      assert.deepEqual(await (await fetch(`${url}/demo/other`)).json(), { error: 'none' });
    } finally {
      local.close();
    }
  });
});
