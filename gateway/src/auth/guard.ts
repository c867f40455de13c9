import type { Request, Response } from 'express';
import { AppError, currentContext, type Clients } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/protos';
import { problem } from '../http/errors';
import type { RouteDef } from '../http/routes';
import type { Guard } from '../app';

export type Principal = supply_tokens_v1.Principal;

const BEARER = /^Bearer ([^\s]{1,512})$/;
const LEVEL_RANK = { none: 0, view: 1, planner: 2 } as const;

function levelOf(principal: Principal, module: string): keyof typeof LEVEL_RANK {
  if (principal.is_admin) return 'planner';
  const level = principal.levels[module];
  return level === 'planner' || level === 'view' ? level : 'none';
}

/** Gate (a): the token's own scopes. `*` passes every route; no scope implies another. */
export function scopeAllows(scopes: readonly string[], required: string | null): boolean {
  return required === null || scopes.includes('*') || scopes.includes(required);
}

/** Gate (b): the creator's level on the module, as it is right now. */
export function levelAllows(principal: Principal, module: string | null, needed: 'view' | 'planner'): boolean {
  if (LEVEL_RANK[levelOf(principal, 'public_api')] < LEVEL_RANK.view) return false;
  return module === null || LEVEL_RANK[levelOf(principal, module)] >= LEVEL_RANK[needed];
}

/** Authenticates the bearer token against the path's tenant and applies both gates. */
export function createGuard(deps: { clients: Clients; authenticate?: (token: string) => Promise<Principal> }): Guard {
  const authenticate = deps.authenticate ?? ((token: string) => deps.clients.tokens.authenticate({ token }));
  return async (route: RouteDef, req: Request, res: Response) => {
    if (route.access.kind === 'none') return;
    const match = BEARER.exec(req.get('Authorization') ?? '');
    if (!match) throw new AppError('unauthenticated', 'Unauthenticated.');
    const principal = await authenticate(match[1]!);
    // Another tenant's token looks exactly like an unknown one: no tenant enumeration.
    if (req.params.tenant !== principal.tenant) throw new AppError('unauthenticated', 'Unauthenticated.');
    res.locals.principal = principal;
    const ctx = currentContext();
    if (ctx) {
      ctx.tenant = principal.tenant;
      ctx.principal = {
        tenant: principal.tenant,
        tokenId: principal.token_id,
        userId: principal.user_id,
        scopes: principal.scopes,
        isAdmin: principal.is_admin,
      };
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
