import { AppError, NotFoundError } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import type { IdentityEvents } from '../events';
import type { UserRecord } from '../records';
import type { IdentityStore } from '../repository';
import { findUser } from '../users/service';
import { tokenInfo } from './create';

/** A user of the tenant, or the operator CLI; resolved to the user's current record. */
type Acting = { kind: 'operator' } | { kind: 'user'; user: UserRecord };

export async function resolveActor(store: IdentityStore, tenant: string, actor: supply_tokens_v1.Actor | undefined): Promise<Acting> {
  if (actor?.operator && !actor.user_id) return { kind: 'operator' };
  if (actor && actor.user_id > 0 && !actor.operator) {
    const user = await store.users.findById(actor.user_id);
    if (user && user.tenant === tenant) return { kind: 'user', user };
    throw new AppError('unauthenticated', 'Unauthenticated.');
  }
  throw new AppError('invalid_argument', 'actor must name exactly one of user_id or operator');
}

/** The one user whose tokens the actor may see and revoke, or null for the whole tenant (admins, operator). */
const confinedTo = (acting: Acting): number | null => (acting.kind === 'user' && !acting.user.is_admin ? acting.user._id : null);

/** A non-admin sees their own tokens; an admin or the operator the tenant's, optionally one user's. Newest first. */
export async function listTokens(
  store: IdentityStore,
  tenant: string,
  req: supply_tokens_v1.ListTokensRequest,
): Promise<supply_tokens_v1.TokenList> {
  const acting = await resolveActor(store, tenant, req.actor);
  const own = confinedTo(acting);
  const filter: Record<string, unknown> = { tenant };
  if (own !== null) filter.user_id = own;
  if (req.user_email) {
    const user = await findUser(store, tenant, req.user_email);
    if (!user || (own !== null && own !== user._id)) return { tokens: [], total: 0 };
    filter.user_id = user._id;
  }
  const perPage = Math.min(Math.max(req.per_page || 100, 1), 1000);
  const page = Math.max(req.page || 1, 1);
  const [tokens, total] = await Promise.all([
    store.tokens.find(filter, { sort: [['_id', -1]], skip: (page - 1) * perPage, limit: perPage }),
    store.tokens.count(filter),
  ]);
  const emails = new Map<number, string>();
  for (const userId of new Set(tokens.map((t) => t.user_id))) {
    emails.set(userId, (await store.users.findById(userId))?.email ?? '');
  }
  return { tokens: tokens.map((t) => tokenInfo(t, emails.get(t.user_id) ?? '')), total };
}

/**
 * Revokes a token of the tenant. Its creator, an admin or the operator may; to anyone else
 * the token does not exist. Every gateway hears of it before the call returns.
 */
export async function revokeToken(
  store: IdentityStore,
  events: IdentityEvents,
  tenant: string,
  req: supply_tokens_v1.RevokeTokenRequest,
  now: Date,
): Promise<supply_tokens_v1.TokenInfo> {
  const acting = await resolveActor(store, tenant, req.actor);
  const token = await store.tokens.findById(req.id);
  const own = confinedTo(acting);
  if (!token || token.tenant !== tenant || (own !== null && token.user_id !== own)) throw new NotFoundError(`No token ${req.id}.`);
  const revoked = token.revoked_at
    ? token
    : ((await store.tokens.findOneAndUpdate({ _id: token._id }, { $set: { revoked_at: now.toISOString() } })) ?? token);
  await events.tokenRevoked({ tenant, token_id: token._id });
  const creator = await store.users.findById(token.user_id);
  return tokenInfo(revoked, creator?.email ?? '');
}
