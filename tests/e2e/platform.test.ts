import assert from 'node:assert/strict';
import { DISTRIBUTED, startSystem, api, type TestSystem } from '../support/system';

describe('platform: all-in-one gateway', function () {
  // Starting the system (six processes in the distributed run) shares two cores with the rest.
  this.timeout(60_000);
  let sys: TestSystem;
  let token: string;
  before(async () => {
    sys = await startSystem();
    token = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
  });
  after(() => sys?.stop());

  it('answers /healthz and reports its bus, meter and every in-process module on /readyz', async () => {
    assert.equal((await api(sys, '/healthz')).status, 200);
    const ready = await api(sys, '/readyz');
    assert.equal(ready.status, 200);
    // Apart, the services are peers: reported, but not part of the gateway's own readiness.
    const own = DISTRIBUTED ? ['bus', 'meter'] : ['bus', 'compute', 'meter', 'reference', 'tokens', 'transactional', 'workflows'];
    assert.deepEqual(Object.keys(ready.body.checks).sort(), own);
    assert.ok(Object.values(ready.body.checks).every((v) => v === true));
  });

  it('echoes a valid X-Request-Id and invents one otherwise', async () => {
    const mine = await api(sys, '/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
    assert.equal(mine.headers.get('x-request-id'), 'abc-123');
    const bad = await api(sys, '/healthz', { headers: { 'X-Request-Id': 'has spaces and {braces}' } });
    assert.match(bad.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('serves a reference read through gRPC in the current envelope', async () => {
    const res = await api(sys, '/demo/api/v1/uoms?per_page=2', { token });
    assert.equal(res.status, 200);
    assert.equal(res.body.links, '/demo/api/v1/uoms?per_page=2');
    assert.equal(res.body.data.length, 2);
    assert.deepEqual(Object.keys(res.body.meta.pagination).sort(), ['current_page', 'last_page', 'per_page', 'result_count', 'total']);
  });

  it('answers unknown routes with a 404 problem and wrong methods with 405 and Allow', async () => {
    const missing = await api(sys, '/demo/api/v1/nothing-here');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(missing.body.type, '/problems/not-found');
    assert.equal(missing.body.instance, '/demo/api/v1/nothing-here');
    assert.equal(missing.body.request_id, missing.headers.get('x-request-id'));
    for (const field of ['type', 'title', 'status', 'detail', 'instance', 'request_id']) assert.ok(field in missing.body, field);

    const wrong = await api(sys, '/demo/api/v1/uoms', { method: 'DELETE', token });
    assert.equal(wrong.status, 405);
    assert.match(wrong.headers.get('allow') ?? '', /GET/);
    assert.equal(wrong.body.type, '/problems/method-not-allowed');
  });

  it('serves the problem type pages it links to', async () => {
    const page = await fetch(`${sys.baseUrl}/problems/not-found`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Not found/);
  });

  it('answers 401 JSON to API clients and a login redirect to browsers', async () => {
    const json = await api(sys, '/demo/api/v1/uoms');
    assert.equal(json.status, 401);
    assert.deepEqual(json.body, { message: 'Unauthenticated.' });
    const xhr = await fetch(`${sys.baseUrl}/demo/api/v1/uoms`, { headers: { 'X-Requested-With': 'XMLHttpRequest' }, redirect: 'manual' });
    assert.equal(xhr.status, 401);
    const browser = await fetch(`${sys.baseUrl}/demo/api/v1/uoms`, { headers: { Accept: 'text/html' }, redirect: 'manual' });
    assert.equal(browser.status, 302);
    assert.equal(browser.headers.get('location'), '/demo/login');
  });

  it('rejects bad query values with the 422 field shape', async () => {
    const res = await api(sys, '/demo/api/v1/uoms?per_page=0&page=abc', { token });
    assert.equal(res.status, 422);
    assert.deepEqual(Object.keys(res.body.errors).sort(), ['page', 'per_page']);
    assert.match(res.body.message, /\(and 1 more error\)$/);
  });

  it('publishes an OpenAPI 3.1 document generated from the route declarations', async () => {
    const res = await api(sys, '/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const uoms = res.body.paths['/{tenant}/api/v1/uoms'].get;
    const perPage = uoms.parameters.find((p: { name: string }) => p.name === 'per_page');
    assert.equal(perPage.schema.maximum, 100);
    assert.equal(uoms['x-required-scope'], 'public_api.read');
  });
});
