import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { COSTS, type RouteDef } from './routes';
import { PROBLEMS, type ProblemSlug } from './problems';

type Json = Record<string, unknown>;
type Io = 'input' | 'output';

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** `/:tenant/api/v1/items/:id` -> `/{tenant}/api/v1/items/{id}` */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

const pascal = (words: string) =>
  words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** `get /:tenant/api/v1/uoms/:id` -> `getUomsById`; a list (GET without a trailing id) -> `listUoms`. */
export function operationIdOf(route: Pick<RouteDef, 'method' | 'path' | 'operationId'>): string {
  if (route.operationId) return route.operationId;
  const segments = route.path.split('/').filter((s) => s && s !== ':tenant' && s !== 'api' && !/^v\d+$/.test(s));
  const last = segments.at(-1) ?? '';
  const verb = { get: last.startsWith(':') ? 'get' : 'list', post: 'post', patch: 'update', delete: 'delete' }[route.method];
  const words = segments.map((s) => (s.startsWith(':') ? `By ${s.slice(1)}` : s));
  return verb + pascal(words.join(' '));
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  'Reference data':
    'Units of measure, items, customer groups, calendars, locations, item-locations, views and hierarchy levels (offset pagination).',
  'Transactional data': 'Sales, inventory, supply plans and financial plans (cursor pagination, filter, sort, include).',
  Workflows: 'Bulk syncs from JSON or CSV files; each answers 202 with a job.',
  Jobs: 'Status of asynchronous jobs.',
  Forecasts: 'Forecast runs.',
  Compute: 'Supply and financial plan runs.',
  Tokens: 'API tokens of the workspace.',
  'Credits and usage': 'Monthly credits and recorded usage.',
  Legacy: 'Routes of the previous API, kept for migration; deprecated.',
  Platform: 'Health, readiness, this document and the problem type pages.',
};

/** Header objects every answer may carry; `required` ones are named per response. */
const HEADERS: Record<string, Json> = {
  XRequestId: {
    description: "The request id (the caller's `X-Request-Id` when well formed, else a new UUID); quote it when asking for support.",
    required: true,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
    example: '5d0f1a4e-8b61-4c84-9a6c-1f2b3c4d5e6f',
  },
  RateLimit: {
    description: 'Remaining requests in the current window and seconds until it resets (IETF RateLimit header fields).',
    schema: { type: 'string' },
    example: '"default";r=59;t=42',
  },
  RateLimitPolicy: {
    description: 'The rate limit policy: quota `q` requests per window of `w` seconds.',
    schema: { type: 'string' },
    example: '"default";q=60;w=60',
  },
  CreditsRemaining: {
    description: "The workspace's credits left this month, after this request.",
    schema: { type: 'string', pattern: '^\\d+$' },
    example: '9980',
  },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^\\d+$' }, example: '30' },
  IdempotentReplayed: {
    description: 'Present (`true`) when this answer replays the first answer to the same Idempotency-Key; no credits were spent.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
  Location: { description: 'Where to follow the job.', schema: { type: 'string' }, example: '/acme/api/v1/jobs/42' },
  Deprecation: { description: 'RFC 9745: when this route was deprecated.', schema: { type: 'string' }, example: '@1735689600' },
  Sunset: { description: 'RFC 8594: when this route is removed.', schema: { type: 'string' }, example: 'Fri, 01 Jan 2027 00:00:00 GMT' },
};

const METERED_HEADERS = {
  RateLimit: ref('headers', 'RateLimit'),
  'RateLimit-Policy': ref('headers', 'RateLimitPolicy'),
  'Credits-Remaining': ref('headers', 'CreditsRemaining'),
};
const BASE_HEADERS = { 'X-Request-Id': ref('headers', 'XRequestId') };

const problemSchema: Json = {
  type: 'object',
  description: 'RFC 9457 problem details; `type` names a page at `/problems/<slug>`.',
  required: ['type', 'title', 'status', 'detail', 'instance', 'request_id'],
  properties: {
    type: { type: 'string', enum: Object.keys(PROBLEMS).map((s) => `/problems/${s}`) },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string' },
    instance: { type: 'string' },
    request_id: { type: 'string' },
  },
};

const fieldErrors: Json = {
  type: 'object',
  description: 'Messages per field, keyed by dotted path (`data.3.quantity`).',
  additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
};

const STATIC_SCHEMAS: Record<string, Json> = {
  Problem: problemSchema,
  Unauthenticated: {
    type: 'object',
    required: ['message'],
    properties: { message: { type: 'string', examples: ['Unauthenticated.'] } },
    additionalProperties: false,
  },
  FieldErrors: fieldErrors,
  ValidationError: {
    type: 'object',
    description: 'Laravel-style 422: the first message (and how many more), then every message per field.',
    required: ['message', 'errors'],
    properties: { message: { type: 'string' }, errors: ref('schemas', 'FieldErrors') },
    additionalProperties: false,
  },
  LegacyValidationError: {
    type: 'object',
    description: 'The 422 of legacy routes.',
    required: ['success', 'message', 'errors'],
    properties: { success: { const: false }, message: { type: 'string' }, errors: ref('schemas', 'FieldErrors') },
    additionalProperties: false,
  },
};

function problemExample(slug: ProblemSlug, detail: string): Json {
  const { status, title } = PROBLEMS[slug];
  return {
    type: `/problems/${slug}`,
    title,
    status,
    detail,
    instance: '/acme/api/v1/items/42',
    request_id: '5d0f1a4e-8b61-4c84-9a6c-1f2b3c4d5e6f',
  };
}

const problemContent = (slug: ProblemSlug, detail: string) => ({
  'application/problem+json': { schema: ref('schemas', 'Problem'), example: problemExample(slug, detail) },
});

/** Reusable error answers; the metering headers are present whenever the request was metered before it failed. */
const RESPONSES: Record<string, Json> = {
  BadRequest: {
    description:
      'The body cannot be parsed (or nests JSON too deep), the path holds a malformed escape, or a query parameter is unknown (`invalid-query`).',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent('invalid-query', 'Unknown filter "colour"; allowed: filter[name].'),
  },
  LoginRedirect: {
    description: 'Unauthenticated, and the request neither accepts JSON nor sends `X-Requested-With: XMLHttpRequest`: to the login page.',
    headers: { ...BASE_HEADERS, Location: { description: 'The login page', schema: { type: 'string' }, example: '/acme/login' } },
  },
  Unauthenticated: {
    description: 'No bearer token, or one that is unknown, expired, revoked or of another workspace.',
    headers: BASE_HEADERS,
    content: { 'application/json': { schema: ref('schemas', 'Unauthenticated'), example: { message: 'Unauthenticated.' } } },
  },
  CreditsExhausted: {
    description: "The workspace's credits for this month are spent.",
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent(
      'credits-exhausted',
      "This workspace's credits for 2026-11 are spent (this request costs 1, 0 remain); they renew on 2026-12-01.",
    ),
  },
  Forbidden: {
    description:
      'The token lacks the scope (`insufficient-scope`), its creator lacks the module permission (`insufficient-permission`), or the Public API module is disabled (`forbidden`).',
    headers: BASE_HEADERS,
    content: problemContent('insufficient-scope', 'This token lacks the public_api.read scope this endpoint requires.'),
  },
  NotFound: {
    description: 'No such record in this workspace.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent('not-found', 'No record with id 42.'),
  },
  Conflict: {
    description: 'A request with this Idempotency-Key is still unanswered, or the request conflicts with the current state.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent('conflict', 'A request with this Idempotency-Key is still in progress.'),
  },
  Gone: {
    description: 'The route was removed at its sunset.',
    headers: BASE_HEADERS,
    content: problemContent('gone', 'This route was removed on 2027-01-01.'),
  },
  PayloadTooLarge: {
    description: 'The body is larger than this endpoint accepts.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent('payload-too-large', 'The request body is larger than this endpoint accepts.'),
  },
  UnsupportedMediaType: {
    description: 'The body has a content type this endpoint does not take.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent('unsupported-media-type', 'Send the body as application/json.'),
  },
  ValidationFailed: {
    description: 'The query or body failed validation.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: {
      'application/json': {
        schema: ref('schemas', 'ValidationError'),
        example: {
          message: 'The name field is required. (and 1 more error)',
          errors: { name: ['The name field is required.'], per_page: ['The per page field must be at least 1.'] },
        },
      },
      'application/problem+json': {
        schema: ref('schemas', 'Problem'),
        example: problemExample('validation-failed', 'The request cannot be processed.'),
      },
    },
  },
  LegacyValidationFailed: {
    description: 'The query or body failed validation (legacy shape).',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: {
      'application/json': {
        schema: ref('schemas', 'LegacyValidationError'),
        example: {
          success: false,
          message: 'The start date field is required.',
          errors: { start_date: ['The start date field is required.'] },
        },
      },
      'application/problem+json': {
        schema: ref('schemas', 'Problem'),
        example: problemExample('validation-failed', 'The request cannot be processed.'),
      },
    },
  },
  HeadersTooLarge: {
    description: 'The request headers are larger than this server accepts (refused before any route).',
    headers: BASE_HEADERS,
    content: problemContent('headers-too-large', 'The request headers are larger than this server accepts (16 KB in all).'),
  },
  RateLimited: {
    description: 'Too many requests in the window; retry after `Retry-After` seconds.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS, 'Retry-After': { ...ref('headers', 'RetryAfter') } },
    content: problemContent('rate-limited', 'Rate limit of 60 requests per 60 s reached; retry in 42 s.'),
  },
  ServiceUnavailable: {
    description: 'A backing service cannot take the request right now; retry after `Retry-After` seconds when given.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
    content: problemContent('service-unavailable', 'The service is unavailable; retry shortly.'),
  },
  UpstreamTimeout: {
    description: 'A backing service did not answer in time.',
    headers: { ...BASE_HEADERS, ...METERED_HEADERS },
    content: problemContent('upstream-timeout', 'The service did not answer in time.'),
  },
};

const ERROR_RESPONSE: Record<number, string> = {
  302: 'LoginRedirect',
  400: 'BadRequest',
  401: 'Unauthenticated',
  402: 'CreditsExhausted',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'ValidationFailed',
  429: 'RateLimited',
  431: 'HeadersTooLarge',
  503: 'ServiceUnavailable',
  504: 'UpstreamTimeout',
};

/** The statuses besides success a route can answer, from what its declaration says it does. */
export function errorStatusesOf(route: RouteDef): number[] {
  // 400 and 431 anywhere: a malformed path escape, a `__proto__` query key or oversized headers are refused before any route.
  const statuses = new Set<number>([400, 404, 431, 503, 504, ...(route.errors ?? [])]);
  const takesBody = route.method === 'post' || route.method === 'patch';
  if (route.access.kind !== 'none') [302, 401, 403, 429].forEach((s) => statuses.add(s));
  if (route.access.kind === 'token' && COSTS[route.access.cost] > 0) statuses.add(402);
  if (route.query || takesBody) statuses.add(422);
  if (takesBody) [409, 413, 415].forEach((s) => statuses.add(s));
  if (route.idempotency || route.serviceIdempotency) statuses.add(409);
  if (route.sunset) statuses.add(410);
  return [...statuses].sort((a, b) => a - b);
}

/** A value valid against `schema` (the first `examples`, else built from the types), for documents that show one everywhere. */
export function exampleOf(schema: unknown, schemas: Record<string, Json>, depth = 0): unknown {
  const s = (schema ?? {}) as Json;
  if (depth > 12) return null;
  if (typeof s.$ref === 'string') return exampleOf(schemas[s.$ref.split('/').pop()!], schemas, depth + 1);
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('const' in s) return s.const;
  if ('default' in s && s.default !== undefined) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) {
      const options = s[key] as Json[];
      return exampleOf(options.find((o) => o.type !== 'null') ?? options[0], schemas, depth + 1);
    }
  }
  if (Array.isArray(s.allOf)) return Object.assign({}, ...(s.allOf as Json[]).map((o) => exampleOf(o, schemas, depth + 1)));
  const type = Array.isArray(s.type) ? (s.type as string[]).find((t) => t !== 'null') : (s.type as string | undefined);
  switch (type) {
    case 'string': {
      if (s.format === 'date') return '2026-01-31';
      if (s.format === 'date-time') return '2026-01-31T12:00:00.000Z';
      if (s.format === 'email') return 'planner@example.com';
      const min = Number(s.minLength ?? 0);
      const max = Number(s.maxLength ?? 64);
      return 'example'.padEnd(min, 'x').slice(0, Math.max(max, 1));
    }
    case 'integer':
    case 'number': {
      const min =
        typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? Math.floor(s.exclusiveMinimum) + 1 : 1;
      const max = typeof s.maximum === 'number' ? s.maximum : Infinity;
      return Math.min(Math.max(min, 1), max);
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const n = Math.max(1, Number(s.minItems ?? 1));
      if (s.maxItems === 0) return [];
      return Array.from({ length: n }, () => exampleOf(s.items, schemas, depth + 1));
    }
    case 'object': {
      const out: Json = {};
      const props = (s.properties ?? {}) as Record<string, unknown>;
      for (const [name, prop] of Object.entries(props)) out[name] = exampleOf(prop, schemas, depth + 1);
      return out;
    }
    default:
      return s.properties ? exampleOf({ ...s, type: 'object' }, schemas, depth + 1) : {};
  }
}

/** Named JSON Schemas of the document: zod schemas carrying `.meta({ id })` land in `components.schemas`. */
class SchemaBook {
  readonly schemas: Record<string, Json> = { ...STATIC_SCHEMAS };

  private rewrite(value: unknown, names: Map<string, string>): unknown {
    if (Array.isArray(value)) return value.map((v) => this.rewrite(v, names));
    if (value && typeof value === 'object') {
      const out: Json = {};
      for (const [k, v] of Object.entries(value)) {
        if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
          const id = v.slice('#/$defs/'.length);
          out[k] = `#/components/schemas/${names.get(id) ?? id}`;
        } else if (!(k === 'id' && typeof v === 'string')) out[k] = this.rewrite(v, names);
      }
      return out;
    }
    return value;
  }

  /** Converts `schema`; when `name` is given the result is a component too and a `$ref` comes back. */
  add(schema: z.ZodType, io: Io, name?: string): Json {
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
    delete raw.$schema;
    const defs = (raw.$defs ?? {}) as Record<string, Json>;
    delete raw.$defs;
    // An id whose input form differs from its output form (defaults, transforms) is kept twice.
    const names = new Map(Object.keys(defs).map((id) => [id, id]));
    for (let round = 0; round < 3; round++) {
      let renamed = false;
      for (const [id, def] of Object.entries(defs)) {
        const final = names.get(id)!;
        const existing = this.schemas[final];
        if (existing && !isDeepStrictEqual(existing, this.rewrite(def, names))) {
          if (final !== id) throw new Error(`OpenAPI: schema ${id} has more than two forms`);
          names.set(id, `${id}${io === 'input' ? 'Input' : 'Output'}`);
          renamed = true;
        }
      }
      if (!renamed) break;
    }
    for (const [id, def] of Object.entries(defs)) this.schemas[names.get(id)!] = this.rewrite(def, names) as Json;
    const root = this.rewrite(raw, names) as Json;
    if (!name) return root;
    const existing = this.schemas[name];
    if (existing && !isDeepStrictEqual(existing, root)) throw new Error(`OpenAPI: two different schemas are named ${name}`);
    this.schemas[name] = root;
    return ref('schemas', name);
  }
}

const jsonContent = (schema: Json, example: unknown) => ({ 'application/json': { schema, example } });

/** Routes the app serves outside the declarations (health, this document, docs, problem pages). */
function platformPaths(book: SchemaBook): Record<string, Json> {
  const platform = (operationId: string, summary: string, responses: Json): Json => ({
    operationId,
    summary,
    tags: ['Platform'],
    security: [],
    responses: { ...responses, '431': { $ref: '#/components/responses/HeadersTooLarge' } },
  });
  const health = book.add(z.object({ status: z.literal('ok') }).meta({ id: 'Health' }), 'output');
  const ready = book.add(
    z
      .object({
        status: z.enum(['ready', 'not_ready']),
        checks: z.record(z.string(), z.boolean()),
        services: z.record(z.string(), z.boolean()).optional(),
      })
      .meta({ id: 'Readiness' }),
    'output',
  );
  const readyExample = { status: 'ready', checks: { bus: true, meter: true } };
  const html = (description: string, example: string) => ({
    description,
    headers: BASE_HEADERS,
    content: { 'text/html': { schema: { type: 'string' }, example } },
  });
  return {
    '/healthz': {
      get: platform('getHealth', 'Liveness: the process answers', {
        '200': { description: 'Alive', headers: BASE_HEADERS, content: jsonContent(health, { status: 'ok' }) },
      }),
    },
    '/readyz': {
      get: platform('getReadiness', 'Readiness: 200 when every dependency this process needs answers, else 503', {
        '200': { description: 'Ready', headers: BASE_HEADERS, content: jsonContent(ready, readyExample) },
        '503': {
          description: 'Not ready',
          headers: { ...BASE_HEADERS, 'Retry-After': ref('headers', 'RetryAfter') },
          content: jsonContent(ready, { status: 'not_ready', checks: { bus: false, meter: true } }),
        },
      }),
    },
    '/openapi.json': {
      get: platform('getOpenApiDocument', 'This OpenAPI 3.1 document', {
        '200': {
          description: 'The document',
          headers: BASE_HEADERS,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['openapi'], properties: { openapi: { type: 'string' } } },
              example: { openapi: '3.1.0' },
            },
          },
        },
      }),
    },
    '/docs': {
      get: platform('getDocs', 'Interactive API reference over this document', {
        '200': html('The reference page', '<!doctype html><html lang="en">…</html>'),
      }),
    },
    '/problems/{slug}': {
      get: {
        ...platform('getProblemType', 'Human-readable page of a problem type', {
          '200': html('The page', '<!doctype html><html lang="en">…</html>'),
          '400': { $ref: '#/components/responses/BadRequest' },
          '404': { $ref: '#/components/responses/NotFound' },
        }),
        parameters: [
          { name: 'slug', in: 'path', required: true, schema: { type: 'string', enum: Object.keys(PROBLEMS) }, example: 'not-found' },
        ],
      },
    },
  };
}

// The seeded demo workspace, so the reference's try-it-out works against a local run as is.
const CSV_FILE = { type: 'string', contentMediaType: 'text/csv', description: 'The CSV file, a header row first' };
const CSV_EXAMPLE =
  'sale_type_name,item_name,customer_group_name,sell_date,timing_interval,quantity,uom\nHistory,SKU-0001,Retail,2026-05-04,week,12.5,ea\n';
const FORM_FLAG = { type: 'string', enum: ['true', 'false', '1', '0'] };
/** A file import: the CSV and the JSON body's other fields as form fields. */
const IMPORT_MULTIPART = {
  schema: {
    type: 'object',
    required: ['file'],
    properties: {
      file: CSV_FILE,
      mode: { type: 'string', enum: ['upsert', 'replace'] },
      dry_run: FORM_FLAG,
      scope: { type: 'object', additionalProperties: { type: 'string' }, description: 'Sent as scope[name]=value' },
      options: { type: 'object', additionalProperties: FORM_FLAG, description: 'Sent as options[name]=value' },
      headers_match_exactly: FORM_FLAG,
      field_mappings: { type: 'array', items: { type: 'string' }, description: 'Sent as field_mappings[]=column' },
    },
  },
  encoding: { file: { contentType: 'text/csv' } },
  example: { file: CSV_EXAMPLE, mode: 'upsert', dry_run: 'false' },
};
/** A legacy load from a file: the CSV and the three arguments (top level or `arguments[...]`). */
const LEGACY_MULTIPART = {
  schema: {
    type: 'object',
    required: ['file'],
    properties: { file: CSV_FILE, allow_record_creation: FORM_FLAG, allow_record_update: FORM_FLAG, should_continue_on_error: FORM_FLAG },
  },
  encoding: { file: { contentType: 'text/csv' } },
  example: { file: CSV_EXAMPLE, allow_record_creation: 'true', allow_record_update: 'true', should_continue_on_error: 'false' },
};

const PATH_EXAMPLES: Record<string, unknown> = { tenant: 'demo', id: 1, job_id: 42 };

function describeAccess(route: RouteDef): string {
  const a = route.access;
  if (a.kind === 'none') return 'No authentication.';
  if (a.kind === 'legacy')
    return `Bearer token of the workspace; no scope rules and no credits${a.module ? `; the token's creator needs ${a.level === 'planner' ? 'Planner' : 'View'} access to ${a.module}` : ''}.`;
  const scope = a.scope ? `Scope \`${a.scope}\`` : 'Any scope';
  const module = a.module ? `; the token's creator needs ${a.level === 'planner' ? 'Planner' : 'View'} access to ${a.module}` : '';
  return `${scope}${module}. Costs ${COSTS[a.cost]} credit${COSTS[a.cost] === 1 ? '' : 's'}.`;
}

export const API_INFO = { title: 'Supply Planning Service API', version: '1.0.0' };

/** OpenAPI 3.1 built from the same route declarations that validate requests. */
export function buildOpenApi(routes: RouteDef[], info: { title: string; version: string } = API_INFO) {
  const book = new SchemaBook();
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const route of routes) {
    const operationId = operationIdOf(route);
    if (operationIds.has(operationId)) throw new Error(`OpenAPI: operationId ${operationId} is declared twice`);
    operationIds.add(operationId);
    const named = pascal(operationId);
    const parameters: unknown[] = [];
    for (const match of route.path.matchAll(/:([A-Za-z_]+)/g)) {
      const name = match[1]!;
      const schema = name === 'tenant' ? { type: 'string', minLength: 1, maxLength: 64 } : { type: 'string', pattern: '^[1-9][0-9]*$' };
      parameters.push({
        name,
        in: 'path',
        required: true,
        description: name === 'tenant' ? 'The workspace (tenant) slug' : 'A positive integer id',
        schema,
        example: String(PATH_EXAMPLES[name] ?? 1),
      });
    }
    if (route.query) {
      const schema = book.add(route.query, 'input') as { properties?: Record<string, Json>; required?: string[] };
      for (const [name, prop] of Object.entries(schema.properties ?? {})) {
        const isObject = name === 'filter' || prop.type === 'object';
        const { description, ...propSchema } = prop;
        parameters.push({
          name,
          in: 'query',
          required: schema.required?.includes(name) ?? false,
          ...(description ? { description } : {}),
          ...(isObject ? { style: 'deepObject', explode: true } : {}),
          // Names the handler checks itself arrive as strings (or `[name]` objects).
          schema:
            isObject && !propSchema.type
              ? { type: 'object', additionalProperties: { type: 'string' }, ...propSchema }
              : Object.keys(propSchema).length === 0
                ? { type: 'string' }
                : propSchema,
        });
      }
    }
    if (route.idempotency || route.serviceIdempotency) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Per tenant, kept 24 h: the same key and body replay the first 2xx answer (`Idempotent-Replayed: true`, no credits spent) and the work is done once; another body: 422; while the first is unanswered: 409.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        example: 'b7d4c1e0-sync-2026-01-31',
      });
    }

    const metered = route.access.kind === 'token';
    const successHeaders: Json = { ...BASE_HEADERS, ...(metered ? METERED_HEADERS : {}) };
    if (route.idempotency || route.serviceIdempotency) successHeaders['Idempotent-Replayed'] = ref('headers', 'IdempotentReplayed');
    // Sunset only where one is decided (DECISIONS: the legacy token exchange); the other legacy routes have none announced.
    // Only a route with a decided sunset announces itself in headers (Deprecation and Sunset); the others say so in the document.
    if (route.deprecated && route.sunset)
      Object.assign(successHeaders, { Deprecation: ref('headers', 'Deprecation'), Sunset: ref('headers', 'Sunset') });
    const responses: Record<string, unknown> = {};
    const primary = route.successStatus ?? 200;
    const successBody = route.response ? book.add(route.response, 'output', `${named}Response`) : null;
    for (const status of [primary, ...(route.alsoAnswers ?? [])]) {
      const headers = status === 202 ? { ...successHeaders, Location: ref('headers', 'Location') } : successHeaders;
      if (status === 304) {
        responses['304'] = {
          description: 'Not modified: the If-None-Match tag is current; no body',
          headers: { ...successHeaders, ETag: { description: "The answer's entity tag", schema: { type: 'string' } } },
        };
        continue;
      }
      responses[String(status)] =
        status === 204 || !successBody
          ? { description: status === 204 ? 'Done; no body' : 'Success', headers }
          : {
              description: status === 202 ? 'Accepted: the job that does the work' : status === 201 ? 'Created' : 'Success',
              headers,
              content: jsonContent(successBody, exampleOf(successBody, book.schemas)),
            };
    }
    for (const status of errorStatusesOf(route)) {
      const name = status === 422 && route.dialect === 'legacy' ? 'LegacyValidationFailed' : ERROR_RESPONSE[status];
      if (!name) throw new Error(`OpenAPI: no answer is described for status ${status}`);
      responses[String(status)] = ref('responses', name);
    }

    const description = [
      describeAccess(route),
      route.deprecated
        ? `Deprecated${route.sunset ? `; removed on ${route.sunset.toISOString().slice(0, 10)} (410 from then)` : '; no sunset has been announced yet (no removal date)'}.`
        : '',
    ]
      .filter(Boolean)
      .join(' ');
    const operation: Record<string, unknown> = {
      operationId,
      summary: route.summary,
      description,
      tags: [route.tag],
      parameters,
      responses,
      ...(route.deprecated ? { deprecated: true } : {}),
      ...(route.sunset ? { 'x-sunset': route.sunset.toISOString() } : {}),
      ...(route.access.kind === 'none' ? { security: [] } : {}),
      ...(route.access.kind === 'token' && route.access.scope ? { 'x-required-scope': route.access.scope } : {}),
      ...(route.access.kind === 'token' ? { 'x-credit-cost': COSTS[route.access.cost] } : {}),
    };
    const accepts = route.accepts ?? (route.method === 'get' || route.method === 'delete' ? 'none' : 'json');
    if (accepts !== 'none' && (route.method === 'post' || route.method === 'patch')) {
      const declared = route.body ?? route.handlerBody;
      const schema = declared
        ? book.add(declared, 'input', `${named}Request`)
        : { type: 'object', description: 'Validated by the service; see the summary.' };
      const example = exampleOf(schema, book.schemas);
      const content: Record<string, unknown> = {};
      if (accepts.includes('json')) content['application/json'] = { schema, example };
      if (accepts.includes('form')) content['application/x-www-form-urlencoded'] = { schema, example };
      if (accepts.includes('multipart')) content['multipart/form-data'] = route.dialect === 'legacy' ? LEGACY_MULTIPART : IMPORT_MULTIPART;
      operation.requestBody = { required: true, content };
    }
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  Object.assign(paths, platformPaths(book));
  const tags = [...new Set([...routes.map((r) => r.tag), 'Platform'])].map((name) => ({
    name,
    description: TAG_DESCRIPTIONS[name] ?? name,
  }));
  return {
    openapi: '3.1.0',
    info: {
      ...info,
      description:
        'Multi-tenant supply planning API. Authenticate with a bearer token (`Authorization: Bearer <id>|spl_...`) created on the API Access page or with `POST /{tenant}/api/v1/tokens`. Every answer carries `X-Request-Id`; metered answers carry `RateLimit`, `RateLimit-Policy` and `Credits-Remaining`. Errors are RFC 9457 problems, except 401 and 422 (Laravel shapes).',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/', description: 'The server this document is served from' }],
    tags,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: '<id>|spl_<48 characters>',
          description: 'An API token of the workspace named in the path.',
        },
      },
      headers: HEADERS,
      responses: RESPONSES,
      schemas: book.schemas,
    },
    security: [{ bearer: [] }],
    paths,
  };
}
