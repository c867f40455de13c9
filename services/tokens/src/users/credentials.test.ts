import { strict as assert } from 'node:assert';
import { isAppError, MemoryMeter, type Meter } from '@supply/kit';
import type { UserRecord } from '../records';
import type { IdentityStore } from '../repository';
import { MAX_FAILED_ATTEMPTS, verifyCredentials } from './credentials';
import { hashPassword } from './password';

describe('verifyCredentials', function () {
  this.timeout(20_000);
  let meter: Meter;
  let store: IdentityStore;
  let lookups = 0;

  before(async () => {
    const user = {
      _id: 1,
      tenant: 'demo',
      email: 'planner@demo.test',
      password_hash: await hashPassword('right-password'),
      is_admin: false,
      levels: {},
    } as UserRecord;
    store = {
      users: {
        findOne: async (filter: Record<string, unknown>) => {
          lookups++;
          return filter.tenant === user.tenant && filter.email === user.email ? user : null;
        },
      },
    } as unknown as IdentityStore;
  });
  beforeEach(() => {
    meter = new MemoryMeter();
    lookups = 0;
  });
  afterEach(() => meter.close());

  const attempt = (password: string, email = 'planner@demo.test') =>
    verifyCredentials(store, meter, 'demo', email, password).then(
      () => 'ok',
      (err: unknown) => (isAppError(err) ? err.code : 'thrown'),
    );

  it('accepts the right password, case-insensitive email', async () => {
    assert.equal(await attempt('right-password', 'Planner@Demo.test'), 'ok');
  });

  it('answers unknown email and wrong password alike', async () => {
    assert.equal(await attempt('wrong'), 'unauthenticated');
    assert.equal(await attempt('right-password', 'nobody@demo.test'), 'unauthenticated');
  });

  it('refuses the sixth attempt after five failures, even with the right password, without checking it', async () => {
    for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) assert.equal(await attempt('wrong'), 'unauthenticated');
    const before = lookups;
    assert.equal(await attempt('right-password'), 'resource_exhausted');
    assert.equal(lookups, before, 'no user lookup once throttled');
    assert.equal(await attempt('right-password', 'other@demo.test'), 'unauthenticated', 'other emails are not throttled');
  });

  it('clears the count after a success', async () => {
    for (let i = 0; i < MAX_FAILED_ATTEMPTS - 1; i++) await attempt('wrong');
    assert.equal(await attempt('right-password'), 'ok');
    for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) assert.equal(await attempt('wrong'), 'unauthenticated');
    assert.equal(await attempt('wrong'), 'resource_exhausted');
  });
});
