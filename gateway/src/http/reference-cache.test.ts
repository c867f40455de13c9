import assert from 'node:assert/strict';
import { ReferenceCache } from './reference-cache';

const answer = (body: string) => ({ body, etag: `W/"${body.length}"` });

describe('gateway: reference cache', () => {
  it('keeps answers per tenant and URL, and drops a tenant on forgetTenant', () => {
    const cache = new ReferenceCache({ maxBytes: 1 << 20, ttlMs: 1000, clock: () => 0 });
    cache.set('a', '/a/api/v1/uoms', cache.generation('a'), answer('A'));
    cache.set('b', '/a/api/v1/uoms', cache.generation('b'), answer('B'));
    assert.equal(cache.get('a', '/a/api/v1/uoms')?.body, 'A');
    assert.equal(cache.get('b', '/a/api/v1/uoms')?.body, 'B');
    cache.forgetTenant('a');
    assert.equal(cache.get('a', '/a/api/v1/uoms'), undefined);
    assert.equal(cache.get('b', '/a/api/v1/uoms')?.body, 'B');
  });

  it('does not store an answer read before a drop (generation check)', () => {
    const cache = new ReferenceCache({ maxBytes: 1 << 20, ttlMs: 1000, clock: () => 0 });
    const generation = cache.generation('a');
    cache.forgetTenant('a');
    cache.set('a', '/u', generation, answer('stale'));
    assert.equal(cache.get('a', '/u'), undefined);
  });

  it('drops everything on forgetAll (a gap in the broadcasts), reads in flight included, then caches again', () => {
    const cache = new ReferenceCache({ maxBytes: 1 << 20, ttlMs: 1000, clock: () => 0 });
    cache.set('a', '/u', cache.generation('a'), answer('A'));
    cache.set('b', '/u', cache.generation('b'), answer('B'));
    cache.forgetTenant('b');
    const inFlight = { a: cache.generation('a'), b: cache.generation('b'), c: cache.generation('c') };
    cache.forgetAll();
    assert.equal(cache.size, 0);
    assert.equal(cache.bytes, 0);
    for (const tenant of ['a', 'b', 'c'] as const) cache.set(tenant, '/u', inFlight[tenant], answer('stale'));
    assert.equal(cache.size, 0, 'no read that started before the drop is stored');
    cache.set('a', '/u', cache.generation('a'), answer('fresh'));
    assert.equal(cache.get('a', '/u')?.body, 'fresh');
    // A later tenant drop still moves that tenant's generation on.
    const before = cache.generation('a');
    cache.forgetTenant('a');
    assert.notEqual(cache.generation('a'), before);
  });

  it('serves nothing older than the TTL', () => {
    let now = 0;
    const cache = new ReferenceCache({ maxBytes: 1 << 20, ttlMs: 100, clock: () => now });
    cache.set('a', '/u', 0, answer('x'));
    now = 99;
    assert.ok(cache.get('a', '/u'));
    now = 100;
    assert.equal(cache.get('a', '/u'), undefined);
    assert.equal(cache.bytes, 0);
  });

  it('evicts the least recently used answers to stay within its bytes', () => {
    const cache = new ReferenceCache({ maxBytes: 4096, ttlMs: 1000, clock: () => 0 });
    const body = 'x'.repeat(900);
    for (const url of ['/1', '/2', '/3']) cache.set('a', url, 0, answer(body));
    assert.ok(cache.get('a', '/1'), 'touch /1 so /2 is the oldest');
    cache.set('a', '/4', 0, answer(body));
    cache.set('a', '/5', 0, answer(body));
    assert.ok(cache.bytes <= 4096);
    assert.equal(cache.get('a', '/2'), undefined);
    assert.ok(cache.get('a', '/1'));
    assert.ok(cache.get('a', '/5'));
    cache.set('a', '/big', 0, answer('y'.repeat(2000)));
    assert.equal(cache.get('a', '/big'), undefined, 'an answer over a quarter of the budget is not kept');
  });
});
