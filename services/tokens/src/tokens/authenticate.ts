import { timingSafeEqual } from 'node:crypto';
import { AppError } from '@supply/kit';
import { hashSecret, parseToken, type supply_tokens_v1 } from '@supply/contracts';
import type { IdentityStore } from '../repository';

const unauthenticated = () => new AppError('unauthenticated', 'Unauthenticated.');
// Compared against when the id is unknown, so unknown id and wrong secret take the same path.
const DUMMY_HASH = hashSecret('spl_unknown-token-placeholder-for-constant-time');
const LAST_USED_RESOLUTION_MS = 60_000;

function sameHash(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/**
 * Resolves a bearer token to its principal: the token's scopes and the creator's current
 * levels, read now, so permission changes apply to the next request.
 */
export async function authenticate(store: IdentityStore, rawToken: string, now: Date): Promise<supply_tokens_v1.Principal> {
  const parsed = parseToken(rawToken);
  if (!parsed) throw unauthenticated();
  const token = await store.tokens.findById(parsed.id);
  const matches = sameHash(hashSecret(parsed.secret), token?.secret_sha256 ?? DUMMY_HASH);
  if (!token || !matches || token.revoked_at) throw unauthenticated();
  if (token.expires_at && Date.parse(token.expires_at) <= now.getTime()) throw unauthenticated();
  const [user, tenant] = await Promise.all([store.users.findById(token.user_id), store.tenants.findById(token.tenant)]);
  if (!user || !tenant || user.tenant !== token.tenant) throw unauthenticated();
  if (!token.last_used_at || now.getTime() - Date.parse(token.last_used_at) > LAST_USED_RESOLUTION_MS) {
    void store.tokens.updateOne({ _id: token._id }, { $set: { last_used_at: now.toISOString() } }).catch(() => undefined);
  }
  return {
    tenant: token.tenant,
    token_id: token._id,
    user_id: user._id,
    user_email: user.email,
    scopes: token.scopes,
    expires_at: token.expires_at ?? '',
    is_admin: user.is_admin,
    levels: { ...user.levels } as Record<string, string>,
    public_api_enabled: tenant.public_api_enabled,
  };
}
