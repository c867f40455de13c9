import { strict as assert } from 'node:assert';
import { PrincipalCache, type Principal } from './principal-cache';

const principal = (over: Partial<Principal> = {}): Principal => ({
  tenant: 'demo',
  token_id: 1,
  user_id: 10,
  user_email: 'planner@demo.test',
  scopes: ['*'],
  expires_at: '',
  is_admin: false,
  levels: { public_api: 'planner' },
  public_api_enabled: true,
  ...over,
});

describe('PrincipalCache', () => {
  let t: number;
  let calls: string[];
  let answers: Map<string, Principal>;
  let cache: PrincipalCache;

  beforeEach(() => {
    t = 0;
    calls = [];
    answers = new Map([
      ['1|a', principal()],
      ['2|b', principal({ token_id: 2 })],
      ['3|c', principal({ token_id: 3, user_id: 11 })],
      ['4|d', principal({ tenant: 'acme', token_id: 4, user_id: 20 })],
    ]);
    cache = new PrincipalCache({
      ttlMs: 30_000,
      maxEntries: 3,
      clock: () => t,
      fetch: async (token) => {
        calls.push(token);
        const p = answers.get(token);
        if (!p) throw new Error('unknown');
        return p;
      },
    });
  });

  it('asks the tokens service once per token within the TTL, again after it', async () => {
    await cache.authenticate('1|a');
    await cache.authenticate('1|a');
    t = 29_999;
    await cache.authenticate('1|a');
    assert.deepEqual(calls, ['1|a']);
    t = 30_000;
    await cache.authenticate('1|a');
    assert.deepEqual(calls, ['1|a', '1|a']);
  });

  it('never caches a failure', async () => {
    await assert.rejects(cache.authenticate('9|z'));
    await assert.rejects(cache.authenticate('9|z'));
    assert.deepEqual(calls, ['9|z', '9|z']);
  });

  it('forgets exactly the revoked token', async () => {
    await cache.authenticate('1|a');
    await cache.authenticate('2|b');
    cache.forgetToken('demo', 1);
    await cache.authenticate('1|a');
    await cache.authenticate('2|b');
    assert.deepEqual(calls, ['1|a', '2|b', '1|a']);
  });

  it("forgets a user's tokens when their access changes, and a tenant's when the tenant changes", async () => {
    for (const t of ['1|a', '3|c', '4|d']) await cache.authenticate(t);
    cache.forgetAccess('demo', 11);
    assert.equal(cache.size, 2);
    cache.forgetAccess('demo');
    assert.equal(cache.size, 1);
    cache.forgetAccess('acme', 20);
    assert.equal(cache.size, 0);
  });

  it('does not store an answer fetched across an invalidation', async () => {
    let release!: () => void;
    const slow = new PrincipalCache({
      clock: () => t,
      fetch: async () => {
        calls.push('slow');
        await new Promise<void>((r) => (release = r));
        return principal();
      },
    });
    const pending = slow.authenticate('1|a');
    await new Promise((r) => setImmediate(r));
    slow.forgetToken('demo', 1);
    release();
    await pending;
    assert.equal(slow.size, 0);
  });

  it('stays within its bound', async () => {
    for (const t of ['1|a', '2|b', '3|c', '4|d']) await cache.authenticate(t);
    assert.equal(cache.size, 3);
  });
});
