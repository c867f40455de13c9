import { createHash } from 'node:crypto';
import { AppError, type Meter } from '@supply/kit';
import type { UserRecord } from '../records';
import type { IdentityStore } from '../repository';
import { DUMMY_PASSWORD_HASH, verifyPassword } from './password';
import { findUser } from './service';

export const MAX_FAILED_ATTEMPTS = 5;
export const ATTEMPT_WINDOW_SECONDS = 60;

const failuresKey = (tenant: string, email: string) =>
  `login-failures:${tenant}:${createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32)}`;

/**
 * Email and password of a user of `tenant` (legacy exchange and page login share the count).
 * Each attempt is counted as a failure before the password is checked, so a burst cannot
 * get more than five guesses in; a success clears the count, as Laravel's login throttle does.
 * Unknown email and wrong password take the same path and time.
 */
export async function verifyCredentials(
  store: IdentityStore,
  meter: Meter,
  tenant: string,
  email: string,
  password: string,
): Promise<UserRecord> {
  const key = failuresKey(tenant, email);
  const attempts = await meter.increment(key, ATTEMPT_WINDOW_SECONDS);
  if (attempts > MAX_FAILED_ATTEMPTS) {
    throw new AppError('resource_exhausted', `Too many failed attempts. Try again in ${ATTEMPT_WINDOW_SECONDS} seconds.`, {
      problem: 'rate-limited',
      headers: { 'Retry-After': String(ATTEMPT_WINDOW_SECONDS) },
    });
  }
  const user = await findUser(store, tenant, email);
  const matches = await verifyPassword(password, user?.password_hash ?? (await DUMMY_PASSWORD_HASH));
  if (!user || !matches) throw new AppError('unauthenticated', 'Invalid credentials.');
  // Counters and balances share one keyspace on every meter adapter: this resets the count.
  await meter.setCreditBalance(key, 0, ATTEMPT_WINDOW_SECONDS);
  return user;
}
