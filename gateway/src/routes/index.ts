import type { Clients } from '@supply/kit';
import type { RouteDef } from '../http/routes';
import { jobRoutes } from './jobs';
import { referenceRoutes } from './reference';
import { tokenRoutes, type TokenRouteDeps } from './tokens';

/** Every HTTP route of the gateway, each feature contributing its own list. */
export function allRoutes(clients: Clients, identity: Omit<TokenRouteDeps, 'clients'>): RouteDef[] {
  return [...referenceRoutes(clients), ...jobRoutes(clients), ...tokenRoutes({ clients, ...identity })];
}
