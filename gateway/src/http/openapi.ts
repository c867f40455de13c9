import { z } from 'zod';
import type { RouteDef } from './routes';
import { PROBLEMS } from './problems';

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;

/** `/:tenant/api/v1/items/:id` -> `/{tenant}/api/v1/items/{id}` */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'instance', 'request_id'],
  properties: {
    type: { type: 'string', examples: ['/problems/insufficient-scope'] },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    request_id: { type: 'string' },
  },
};

/** OpenAPI 3.1 built from the same route declarations that validate requests. */
export function buildOpenApi(routes: RouteDef[], info: { title: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters: unknown[] = [];
    for (const match of route.path.matchAll(/:([A-Za-z_]+)/g)) {
      parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    if (route.query) {
      const schema = jsonSchema(route.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        parameters.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: prop });
      }
    }
    if (route.idempotency) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Per tenant, kept 24 h: the same key and body replay the first 2xx answer (`Idempotent-Replayed: true`, no credits spent) and the work is done once; another body: 422; while the first is unanswered: 409.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
      });
    }
    const responses: Record<string, unknown> = {
      [String(route.successStatus ?? 200)]: {
        description: 'Success',
        content: { 'application/json': { schema: route.response ? jsonSchema(route.response, 'output') : {} } },
      },
    };
    if (route.access.kind !== 'none') {
      responses['401'] = {
        description: 'Unauthenticated',
        content: { 'application/json': { schema: { type: 'object', properties: { message: { const: 'Unauthenticated.' } } } } },
      };
    }
    if (route.access.kind === 'token') {
      responses['403'] = { description: 'Scope or creator permission refused', content: { 'application/problem+json': { schema: problemSchema } } };
    }
    if (route.idempotency) {
      responses['409'] = { description: 'A request with this Idempotency-Key is still unanswered', content: { 'application/problem+json': { schema: problemSchema } } };
    }
    if (route.query || route.body) {
      responses['422'] = {
        description: 'Validation error',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { message: { type: 'string' }, errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
            },
          },
        },
      };
    }
    const operation: Record<string, unknown> = {
      summary: route.summary,
      tags: [route.tag],
      parameters,
      responses,
      ...(route.deprecated ? { deprecated: true } : {}),
      ...(route.access.kind === 'none' ? { security: [] } : {}),
      ...(route.access.kind === 'token' && route.access.scope ? { 'x-required-scope': route.access.scope } : {}),
    };
    if (route.body) {
      const content: Record<string, unknown> = {};
      const accepts = route.accepts ?? 'json';
      const schema = jsonSchema(route.body, 'input');
      if (accepts.includes('json')) content['application/json'] = { schema };
      if (accepts.includes('form')) content['application/x-www-form-urlencoded'] = { schema };
      if (accepts.includes('multipart')) content['multipart/form-data'] = { schema };
      operation.requestBody = { required: true, content };
    }
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Problem: problemSchema,
        ProblemTypes: { type: 'string', enum: Object.keys(PROBLEMS).map((s) => `/problems/${s}`) },
      },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
