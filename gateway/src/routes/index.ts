import type { Clients } from '@supply/kit';
import { cursorCodec } from '../http/cursor';
import type { ReferenceCache } from '../http/reference-cache';
import type { RouteDef } from '../http/routes';
import { forecastRoutes } from './forecasts';
import { jobRoutes } from './jobs';
import { legacyLoadRoutes } from './legacy-loads';
import { legacyTransactionalRoutes } from './legacy/index';
import { referenceRoutes } from './reference';
import { supplyPlanRoutes } from './supply-plans';
import { tokenRoutes, type TokenRouteDeps } from './tokens';
import { transactionalRoutes } from './transactional';
import { usageRoutes } from './usage';
import { workflowRoutes } from './workflows';

/** Every HTTP route of the gateway, each feature contributing its own list. `cursorSecret` signs cursors; `referenceCache` (optional) answers reference reads. */
export function allRoutes(
  clients: Clients,
  identity: Omit<TokenRouteDeps, 'clients'>,
  cursorSecret?: string,
  referenceCache?: ReferenceCache,
): RouteDef[] {
  const cursors = cursorCodec(cursorSecret);
  return [
    ...referenceRoutes(clients, referenceCache),
    ...jobRoutes(clients),
    ...workflowRoutes(clients),
    ...legacyLoadRoutes(clients),
    ...tokenRoutes({ clients, ...identity }),
    ...usageRoutes(clients, { now: identity.now }),
    ...transactionalRoutes(clients, cursors),
    ...legacyTransactionalRoutes(clients),
    ...forecastRoutes(clients, cursors),
    ...supplyPlanRoutes(clients),
  ];
}
