import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, ValidationError, openStore, type Store } from '@supply/kit';
import { IN_FLIGHT_TTL_MS, IdempotencyKeys, type RecoverAbandoned } from './keys';

describe('idempotency keys', () => {
  let dir: string;
  let store: Store;
  let keys: IdempotencyKeys;
  const alice = { tenant: 'demo', userId: 1 };
  const bob = { tenant: 'demo', userId: 2 };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'supply-keys-'));
    store = await openStore({ database: 'workflows', dataDir: dir });
    keys = await IdempotencyKeys.open(store);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays the kept answer to the same user and request; another user’s same key is a key of their own', async () => {
    const first = await keys.claim(alice, 'k1', 'fp-a');
    assert.equal(first.kind, 'claimed');
    assert.ok(first.kind === 'claimed' && (await keys.complete(first, { job: 7 })));
    assert.deepEqual(await keys.claim(alice, 'k1', 'fp-a'), { kind: 'replay', answer: { job: 7 } });
    assert.equal((await keys.claim(bob, 'k1', 'fp-a')).kind, 'claimed');
    await assert.rejects(keys.claim(alice, 'k1', 'fp-other'), ValidationError);
  });

  it('answers 409 while the first request is in flight, and frees a released key', async () => {
    const first = await keys.claim(alice, 'k2', 'fp');
    await assert.rejects(keys.claim(alice, 'k2', 'fp'), ConflictError);
    if (first.kind === 'claimed') await keys.release(first);
    assert.equal((await keys.claim(alice, 'k2', 'fp')).kind, 'claimed');
  });

  it('an abandoned claim whose request created nothing is claimed afresh', async () => {
    const t0 = 1_000_000;
    await keys.claim(alice, 'k3', 'fp', t0);
    const nothing: RecoverAbandoned = async () => null;
    assert.equal((await keys.claim(alice, 'k3', 'fp', t0 + IN_FLIGHT_TTL_MS + 1, nothing)).kind, 'claimed');
  });

  it('an abandoned claim whose request did create a job replays that job, so the work is never done twice', async () => {
    const t0 = 2_000_000;
    const first = await keys.claim(alice, 'k4', null, t0); // a stream: the fingerprint comes at its end
    assert.equal(first.kind, 'claimed');
    const asked: string[] = [];
    const recover: RecoverAbandoned = async (claimId) => {
      asked.push(claimId);
      return { answer: { job: 42 }, fingerprint: 'fp-file' };
    };
    const later = t0 + IN_FLIGHT_TTL_MS + 1;
    assert.deepEqual(await keys.claim(alice, 'k4', 'fp-file', later, recover), { kind: 'replay', answer: { job: 42 } });
    assert.deepEqual(asked, [first.kind === 'claimed' ? first.claimId : '']);
    // Kept now: a later repeat replays without asking again, and another request with the key is refused.
    assert.deepEqual(await keys.claim(alice, 'k4', 'fp-file', later + 1, async () => assert.fail('asked again')), {
      kind: 'replay',
      answer: { job: 42 },
    });
    await assert.rejects(keys.claim(alice, 'k4', 'fp-another', later + 2), ValidationError);
    // The first request's own late completion changes nothing.
    if (first.kind === 'claimed') assert.equal(await keys.complete(first, { job: 99 }), false);
  });
});
