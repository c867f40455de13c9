import { createHash, randomBytes } from 'node:crypto';
import { AppError, type Meter } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import type { IdentityStore } from '../repository';
import { mayGrantPrivileged } from '../tokens/create';
import { verifyCredentials } from '../users/credentials';
import { userView } from '../users/service';

/** Page sessions end this long after login; the cookie carries the same lifetime. */
export const SESSION_HOURS = 8;
const SESSION_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const sessionId = (token: string) => createHash('sha256').update(token).digest('hex');
const signedOut = () => new AppError('unauthenticated', 'Unauthenticated.');

/** Checks email and password (the same throttle as the legacy exchange) and opens a session. */
export async function login(
  store: IdentityStore,
  meter: Meter,
  tenant: string,
  req: supply_tokens_v1.LoginRequest,
  now: Date,
): Promise<supply_tokens_v1.LoginResult> {
  const user = await verifyCredentials(store, meter, tenant, req.email, req.password);
  await store.sessions.deleteMany({ expires_at: { $lte: now.toISOString() } });
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_HOURS * 3_600_000).toISOString();
  await store.sessions.insertOne({
    _id: sessionId(token),
    tenant,
    user_id: user._id,
    created_at: now.toISOString(),
    expires_at: expiresAt,
  });
  return { session_token: token, expires_at: expiresAt };
}

/** The signed-in user as they are now (levels, admin flag, the tenant's module). */
export async function getSession(
  store: IdentityStore,
  tenant: string,
  req: supply_tokens_v1.SessionRequest,
  now: Date,
): Promise<supply_tokens_v1.Session> {
  if (!SESSION_SHAPE.test(req.session_token)) throw signedOut();
  const session = await store.sessions.findById(sessionId(req.session_token));
  if (!session || session.tenant !== tenant || Date.parse(session.expires_at) <= now.getTime()) throw signedOut();
  const [user, tenantRecord] = await Promise.all([store.users.findById(session.user_id), store.tenants.findById(tenant)]);
  if (!user || !tenantRecord || user.tenant !== tenant) throw signedOut();
  return {
    user: userView(user),
    expires_at: session.expires_at,
    may_grant_privileged: mayGrantPrivileged(user),
    public_api_enabled: tenantRecord.public_api_enabled,
  };
}

export async function logout(store: IdentityStore, req: supply_tokens_v1.SessionRequest): Promise<void> {
  if (SESSION_SHAPE.test(req.session_token)) await store.sessions.deleteOne({ _id: sessionId(req.session_token) });
}
