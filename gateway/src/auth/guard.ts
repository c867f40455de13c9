import type { Request, Response } from 'express';
import { AppError, type PrincipalContext, type RequestContext } from '@supply/kit';
import { parseToken } from '@supply/contracts';
import { problem } from '../http/errors';
import type { RouteDef } from '../http/routes';
import type { Guard } from '../app';
import type { Principal } from './principal-cache';

export type { Principal };

/** One space after the scheme and nothing around the token: anything else is malformed. */
const BEARER = /^Bearer ([^\s]{1,512})$/i;
const LEVEL_RANK = { none: 0, view: 1, planner: 2 } as const;

const unauthenticated = () => new AppError('unauthenticated', 'Unauthenticated.');

function levelOf(principal: Pick<Principal, 'is_admin' | 'levels'>, module: string): keyof typeof LEVEL_RANK {
  if (principal.is_admin) return 'planner';
  const level = principal.levels[module];
  return level === 'planner' || level === 'view' ? level : 'none';
}

/** Gate (a): the token's own scopes. `*` passes every route; no scope implies another. */
export function scopeAllows(scopes: readonly string[], required: string | null): boolean {
  return required === null || scopes.includes('*') || scopes.includes(required);
}

/** Gate (b): the creator's level on the module, as it is right now (and at least View on the Public API). */
export function levelAllows(principal: Pick<Principal, 'is_admin' | 'levels'>, module: string | null, needed: 'view' | 'planner'): boolean {
  if (LEVEL_RANK[levelOf(principal, 'public_api')] < LEVEL_RANK.view) return false;
  return module === null || LEVEL_RANK[levelOf(principal, module)] >= LEVEL_RANK[needed];
}

/** The principal as calls carry it; one object per cached principal, so its metadata is built once. */
const contexts = new WeakMap<Principal, PrincipalContext>();
function principalContextOf(principal: Principal): PrincipalContext {
  let context = contexts.get(principal);
  if (!context) {
    context = {
      tenant: principal.tenant,
      tokenId: principal.token_id,
      userId: principal.user_id,
      scopes: principal.scopes,
      isAdmin: principal.is_admin,
    };
    contexts.set(principal, context);
  }
  return context;
}

export interface GuardDeps {
  /** Resolves a well-formed bearer value to its principal (cached; see PrincipalCache). */
  authenticate(token: string): Promise<Principal>;
  now(): Date;
}

/**
 * Authenticates the bearer token against the path's tenant and applies both gates. A value
 * that is not shaped like a token, or whose checksum fails, never reaches the tokens service.
 */
export function createGuard(deps: GuardDeps): Guard {
  return async (route: RouteDef, req: Request, res: Response) => {
    if (route.access.kind === 'none') return;
    const bearer = BEARER.exec(req.get('Authorization') ?? '')?.[1];
    if (!bearer || !parseToken(bearer)) throw unauthenticated();
    const principal = await deps.authenticate(bearer);
    // Another tenant's token looks exactly like an unknown one: no tenant enumeration.
    if (req.params.tenant !== principal.tenant) throw unauthenticated();
    // A cached principal may have expired since it was stored.
    if (principal.expires_at && Date.parse(principal.expires_at) <= deps.now().getTime()) throw unauthenticated();
    res.locals.principal = principal;
    // The request's own context, never whatever is ambient here: every call made for it then acts for this principal.
    const ctx = res.locals.context as RequestContext | undefined;
    if (ctx) {
      ctx.tenant = principal.tenant;
      ctx.principal = principalContextOf(principal);
    }
    if (!principal.public_api_enabled) {
      throw problem('forbidden', 'The Public API module is disabled for this workspace.');
    }
    if (route.access.kind === 'token' && !scopeAllows(principal.scopes, route.access.scope)) {
      throw problem('insufficient-scope', `This token lacks the ${route.access.scope} scope this endpoint requires.`);
    }
    if (!levelAllows(principal, route.access.module, route.access.level)) {
      throw problem(
        'insufficient-permission',
        route.access.module
          ? `The user who created this token needs ${route.access.level === 'planner' ? 'Planner' : 'View'} access to the ${route.access.module} module.`
          : 'The user who created this token no longer has access to the Public API module.',
      );
    }
  };
}
