import type { Clients } from '@supply/kit';
import { buildOpenApi } from './http/openapi';
import { allRoutes } from './routes/index';

/** The document the gateway serves, built in-process: route declarations need no live clients until a handler runs. */
export function openApiDocument() {
  const inert = new Proxy({}, { get: () => undefined }) as Clients;
  return buildOpenApi(allRoutes(inert, { now: () => new Date(), revoked: () => {} }));
}
