import { AppError, ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import { SCOPES, formatToken, hashSecret, newSecret, type supply_tokens_v1 } from '@supply/contracts';
import type { IdentityStore } from '../repository';
import type { TokenRecord, UserRecord } from '../records';

export { SCOPES };
/** Every scope but Read needs Planner on the Public API module, or a workspace admin. */
export const PRIVILEGED_SCOPES = new Set<string>(SCOPES.filter((s) => s !== 'public_api.read'));

export function mayGrantPrivileged(user: Pick<UserRecord, 'is_admin' | 'levels'>): boolean {
  return user.is_admin || user.levels.public_api === 'planner';
}

export function tokenInfo(t: TokenRecord, email: string): supply_tokens_v1.TokenInfo {
  return {
    id: t._id,
    name: t.name,
    scopes: t.scopes,
    expires_at: t.expires_at ?? '',
    created_at: t.created_at,
    last_used_at: t.last_used_at ?? '',
    revoked_at: t.revoked_at ?? '',
    user_id: t.user_id,
    user_email: email,
  };
}

type TokenRequest = { name: string; scopes: string[]; expires_at: string };

/** Validates a token request as the 422 body reports it: name, scopes, expiry. */
export function validateTokenRequest(req: TokenRequest, now: Date): { expiresAt: string | null } {
  const fields: FieldErrors = fieldErrors();
  const add = (k: string, m: string) => (fields[k] ??= []).push(m);
  if (!req.name.trim()) add('name', 'The name field is required.');
  else if (req.name.length > 255) add('name', 'The name field must not be greater than 255 characters.');
  if (req.scopes.length === 0) add('scopes', 'The scopes field is required.');
  req.scopes.forEach((s, i) => {
    if (!(SCOPES as readonly string[]).includes(s)) add(`scopes.${i}`, `The selected scopes.${i} is invalid.`);
  });
  let expiresAt: string | null = null;
  if (req.expires_at) {
    const ms = Date.parse(req.expires_at);
    if (Number.isNaN(ms)) add('expires_at', 'The expires at field must be a valid date.');
    else if (ms <= now.getTime()) add('expires_at', 'The expires at field must be a date after now.');
    else expiresAt = new Date(ms).toISOString();
  }
  if (Object.keys(fields).length) throw new ValidationError(fields);
  return { expiresAt };
}

function insufficientPermission(): AppError {
  return new AppError(
    'permission_denied',
    'Only Planner (Full Access) users of the Public API module or workspace administrators may grant these permissions.',
    { problem: 'insufficient-permission' },
  );
}

async function issue(
  store: IdentityStore,
  user: UserRecord,
  fields: { name: string; scopes: string[]; expiresAt: string | null; parentTokenId: number | null },
  now: Date,
): Promise<supply_tokens_v1.CreatedToken> {
  const secret = newSecret();
  const record = await store.tokens.insertOne({
    tenant: user.tenant,
    user_id: user._id,
    name: fields.name,
    secret_sha256: hashSecret(secret),
    scopes: fields.scopes,
    expires_at: fields.expiresAt,
    created_at: now.toISOString(),
    last_used_at: null,
    revoked_at: null,
    parent_token_id: fields.parentTokenId,
  });
  return { token: tokenInfo(record, user.email), plain_text_token: formatToken(record._id, secret) };
}

/** Creates a token for `user`; privileged scopes need Planner on Public API (403 before anything is written). */
export async function createToken(
  store: IdentityStore,
  user: UserRecord,
  req: TokenRequest,
  now: Date,
): Promise<supply_tokens_v1.CreatedToken> {
  const { expiresAt } = validateTokenRequest(req, now);
  const scopes = [...new Set(req.scopes)];
  if (scopes.some((s) => PRIVILEGED_SCOPES.has(s)) && !mayGrantPrivileged(user)) throw insufficientPermission();
  return issue(store, user, { name: req.name.trim(), scopes, expiresAt, parentTokenId: null }, now);
}

/** Legacy exchange: a `*` token with no expiry; gate (b) still holds it to the user's levels. */
export async function createLegacyToken(store: IdentityStore, user: UserRecord, now: Date): Promise<supply_tokens_v1.CreatedToken> {
  return issue(store, user, { name: 'Legacy token exchange', scopes: ['*'], expiresAt: null, parentTokenId: null }, now);
}

/** `*` covers every scope; otherwise each requested scope must be one the parent holds. */
export function scopesWithin(requested: readonly string[], parent: readonly string[]): boolean {
  return parent.includes('*') || requested.every((s) => parent.includes(s));
}

/**
 * A token made from the calling token: same creator, scopes within the caller's, expiry no
 * later than the caller's (a caller that expires cannot mint one that never does). 403 otherwise.
 */
export async function provisionToken(
  store: IdentityStore,
  tenant: string,
  req: TokenRequest & { parent_token_id: number },
  now: Date,
): Promise<supply_tokens_v1.CreatedToken> {
  const parent = await store.tokens.findById(req.parent_token_id);
  const parentExpired = parent?.expires_at ? Date.parse(parent.expires_at) <= now.getTime() : false;
  const user = parent ? await store.users.findById(parent.user_id) : null;
  if (!parent || !user || parent.tenant !== tenant || parent.revoked_at || parentExpired) {
    throw new AppError('unauthenticated', 'Unauthenticated.');
  }
  const { expiresAt } = validateTokenRequest(req, now);
  const scopes = [...new Set(req.scopes)];
  if (!scopesWithin(scopes, parent.scopes)) {
    throw new AppError('permission_denied', "A provisioned token's scopes must be a subset of the calling token's scopes.", {
      problem: 'insufficient-scope',
    });
  }
  if (parent.expires_at && (expiresAt === null || Date.parse(expiresAt) > Date.parse(parent.expires_at))) {
    throw new AppError('permission_denied', `A provisioned token must expire no later than the calling token (${parent.expires_at}).`, {
      problem: 'forbidden',
    });
  }
  if (scopes.some((s) => PRIVILEGED_SCOPES.has(s)) && !mayGrantPrivileged(user)) throw insufficientPermission();
  return issue(store, user, { name: req.name.trim(), scopes, expiresAt, parentTokenId: parent._id }, now);
}
