export { gatewayModule } from './module';
export { createApp } from './app';

// Beyond the module: the gateway's published description of itself, for tools and tests.
export { openApiDocument } from './openapi-document';
export { operationIdOf } from './http/openapi';
export { allRoutes } from './routes/index';
export { accessTable } from './auth/access';
export type { Access } from './http/routes';
export { PROBLEMS, type ProblemSlug } from './http/problems';
export { PASSTHROUGH_VIA } from './http/legacy-proxy';
