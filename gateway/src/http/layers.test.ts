import assert from 'node:assert/strict';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { fixedPaths, inSequence, isApiPath, pagesOnly } from './layers';

/** Runs `handler` on a fake request and resolves with what it passed to the final `next`. */
function run(handler: RequestHandler, path = '/demo/api/v1/uoms', method = 'GET'): Promise<{ err: unknown; trail: string[] }> {
  const trail: string[] = [];
  const req = { path, method, trail } as unknown as Request;
  return new Promise((resolve) => {
    handler(req, {} as Response, ((err?: unknown) => resolve({ err, trail })) as NextFunction);
  });
}
const mark =
  (name: string): RequestHandler =>
  (req, _res, next) => {
    (req as unknown as { trail: string[] }).trail.push(name);
    next();
  };

describe('inSequence: several middleware as one Express layer', () => {
  it('runs each in order, then calls the outer next', async () => {
    const { err, trail } = await run(inSequence(mark('a'), mark('b'), mark('c')));
    assert.equal(err, undefined);
    assert.deepEqual(trail, ['a', 'b', 'c']);
  });

  it('skips the rest on next(err) and hands the error on', async () => {
    const boom = new Error('boom');
    const { err, trail } = await run(inSequence(mark('a'), (_req, _res, next) => next(boom), mark('c')));
    assert.equal(err, boom);
    assert.deepEqual(trail, ['a']);
  });

  it('turns a throw or a rejected promise into next(err)', async () => {
    const thrown = new Error('thrown');
    const rejected = new Error('rejected');
    const throwing: RequestHandler = () => {
      throw thrown;
    };
    assert.equal((await run(inSequence(mark('a'), throwing, mark('c')))).err, thrown);
    const { err, trail } = await run(inSequence(mark('a'), () => Promise.reject(rejected), mark('c')));
    assert.equal(err, rejected);
    assert.deepEqual(trail, ['a']);
  });

  it('continues after a middleware that calls next later', async () => {
    const later: RequestHandler = (_req, _res, next) => void setImmediate(() => next());
    const { err, trail } = await run(inSequence(mark('a'), later, mark('c')));
    assert.equal(err, undefined);
    assert.deepEqual(trail, ['a', 'c']);
  });
});

describe('pagesOnly: page routers that API paths pass by', () => {
  it('tells API paths from the rest', () => {
    assert.equal(isApiPath('/demo/api/v1/uoms'), true);
    assert.equal(isApiPath('/demo/api/v1'), true);
    assert.equal(isApiPath('/demo/login'), false);
    assert.equal(isApiPath('/demo/api'), false);
    assert.equal(isApiPath('/api/v1/x'), false);
    assert.equal(isApiPath('/docs'), false);
    assert.equal(isApiPath('/'), false);
  });

  it('calls the router for a page path only', async () => {
    assert.deepEqual((await run(pagesOnly(mark('router')), '/demo/login')).trail, ['router']);
    assert.deepEqual((await run(pagesOnly(mark('router')), '/demo/api/v1/uoms')).trail, []);
  });
});

describe('fixedPaths: GET handlers of fixed paths as one lookup', () => {
  const fixed = fixedPaths({ '/healthz': mark('health'), '/openapi.json': mark('openapi') });

  it('matches as an Express route would: GET and HEAD, any case, with or without a trailing slash', async () => {
    for (const path of ['/healthz', '/HealthZ', '/healthz/']) assert.deepEqual((await run(fixed, path)).trail, ['health'], path);
    assert.deepEqual((await run(fixed, '/healthz', 'HEAD')).trail, ['health']);
    assert.deepEqual((await run(fixed, '/openapi.json')).trail, ['openapi']);
  });

  it('passes other methods and paths on', async () => {
    assert.deepEqual((await run(fixed, '/healthz', 'POST')).trail, []);
    for (const path of ['/healthz//', '/healthzz', '/demo/healthz', '/demo/api/v1/uoms', '/'])
      assert.deepEqual((await run(fixed, path)).trail, [], path);
  });
});
