import type { Access, RouteDef } from '../http/routes';

export interface AccessRow {
  method: string;
  /** Express path, e.g. `/:tenant/api/v1/uoms`. */
  path: string;
  access: Access;
}

/**
 * The one table that says, for every route, which scope (gate a) and which module level of
 * the token's creator (gate b) it needs. It is the routes' own `access` fields, so the
 * guard, the OpenAPI document and the tests that walk it can never disagree.
 */
export function accessTable(routes: readonly RouteDef[]): AccessRow[] {
  return routes.map((r) => ({ method: r.method.toUpperCase(), path: r.path, access: r.access }));
}
