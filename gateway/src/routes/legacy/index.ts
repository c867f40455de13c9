import type { Clients } from '@supply/kit';
import type { RouteDef } from '../../http/routes';
import { legacySalesRoutes } from './sales';
import { legacySupplyPlanRoutes } from './supply-plan';

/** Legacy transactional reads: flat bodies, id walking, no credits (the pre-v1 API clients still call). */
export function legacyTransactionalRoutes(clients: Clients): RouteDef[] {
  return [...legacySalesRoutes(clients), ...legacySupplyPlanRoutes(clients)];
}
