import type { Request, Response } from 'express';
import { z } from 'zod';
import { MAX_ID, NotFoundError, parseDecimal, parseId, ValidationError } from '@supply/kit';
import type { PermissionModule, Scope } from '@supply/contracts';
import { fieldErrorsFromZod } from './validation';

export { LEVELS, PERMISSION_MODULES as MODULES, SCOPES, type Level, type PermissionModule, type Scope } from '@supply/contracts';

/** Credits a request of each class spends (a workflow stages and runs a job, a compute run is the heaviest; utilities are free). */
export const COSTS = { read: 1, write: 2, workflow: 5, compute: 20, utility: 0 } as const;
export type CostClass = keyof typeof COSTS;

/**
 * Who may call a route. `token`: a bearer token of the path's tenant, passing gate (a)
 * (scope, when one is named) and gate (b) (the creator's level on `module`: `view` for
 * reads, `planner` for writes). `none`: public. `legacy`: a token, no scope rules, no credits.
 */
export type Access =
  | { kind: 'none' }
  | { kind: 'token'; scope: Scope | null; module: PermissionModule | null; level: 'view' | 'planner'; cost: CostClass }
  | { kind: 'legacy'; module: PermissionModule | null; level: 'view' | 'planner' };

/** Which error and success shapes a route speaks. */
export type Dialect = 'current' | 'legacy' | 'page';

export type Reply =
  | {
      kind: 'envelope';
      status?: number;
      data: unknown[];
      meta?: Record<string, unknown>;
      message?: string;
      headers?: Record<string, string>;
    }
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  /** The handler wrote the response itself (pages, redirects, streams). */
  | { kind: 'sent' };

export interface HandlerInput<Q, B> {
  query: Q;
  body: B;
  params: Record<string, string>;
  req: Request;
  res: Response;
}

export interface RouteDef<Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path, e.g. `/:tenant/api/v1/uoms`. */
  path: string;
  summary: string;
  tag: string;
  access: Access;
  dialect: Dialect;
  query?: Q;
  body?: B;
  /** A body checked past the app (by the handler after work that must come first, or by the service behind it): documented only. */
  handlerBody?: z.ZodType;
  /** Documents the success body in OpenAPI. */
  response?: z.ZodType;
  successStatus?: number;
  /** Body parsing the route needs; `json` is the default for POST/PATCH. */
  accepts?: 'json' | 'form' | 'json-or-form' | 'multipart' | 'json-or-multipart' | 'none';
  deprecated?: boolean;
  /** Removal date of a deprecated route (documented as `x-sunset`; the route sends `Sunset` itself). */
  sunset?: Date;
  /** Unique OpenAPI `operationId`; derived from the method and path when unset. */
  operationId?: string;
  /** Other success statuses answered with the same `response` schema (a dry run's 200 beside a 202). */
  alsoAnswers?: number[];
  /** Error statuses this route answers beyond those its declaration implies (OpenAPI). */
  errors?: number[];
  /** The service behind the route keeps its `Idempotency-Key` (syncs, imports, legacy loads, compute runs). */
  serviceIdempotency?: boolean;
  /**
   * Who keeps this POST's `Idempotency-Key` (every POST takes one). `gateway`: the gateway around the
   * handler (http/idempotency.ts); the object form also names what of a 2xx body is kept and
   * replayed (a created secret must not be). Unset: the route passes the key to the service
   * that keeps it (syncs, imports, legacy loads, compute runs), or takes none.
   */
  idempotency?: 'gateway' | { by: 'gateway'; stored(body: unknown): unknown };
  handler(input: HandlerInput<z.infer<Q>, z.infer<B>>): Promise<Reply>;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- zod's empty object shape
export function defineRoute<Q extends z.ZodType = z.ZodObject<{}>, B extends z.ZodType = z.ZodObject<{}>>(def: RouteDef<Q, B>): RouteDef {
  return def as unknown as RouteDef;
}

/**
 * Query strings arrive as strings (and `filter[name]` as nested objects); schemas coerce
 * explicitly. Validation failure is a 422 naming each field.
 */
export function parseInput<T extends z.ZodType>(schema: T | undefined, value: unknown): z.infer<T> {
  if (!schema) return {} as z.infer<T>;
  // reportInput lets messages tell a missing field ("is required") from a wrong-typed one.
  const result = schema.safeParse(value ?? {}, { reportInput: true });
  if (!result.success) throw new ValidationError(fieldErrorsFromZod(result.error));
  return result.data;
}

/** The envelope `links` is the request's own path and query string. */
export function envelope(req: Request, reply: Extract<Reply, { kind: 'envelope' }>) {
  return {
    ...(reply.message !== undefined ? { message: reply.message } : {}),
    data: reply.data,
    meta: reply.meta ?? {},
    links: req.originalUrl,
  };
}

/** Envelope pieces every list and record answer shares (named in the OpenAPI document). */
export const linksSchema = z
  .string()
  .meta({ id: 'Links', description: "The request's own path and query string", examples: ['/acme/api/v1/items?page=2&per_page=25'] });
export const emptyMetaSchema = z.object({}).meta({ id: 'EmptyMeta', description: 'No metadata for this answer' });
export const offsetMetaSchema = z
  .object({
    pagination: z.object({
      result_count: z.number().int().min(0).describe('Records on this page'),
      per_page: z.number().int().min(1),
      current_page: z.number().int().min(1),
      total: z.number().int().min(0).describe('Records matching, over all pages'),
      last_page: z.number().int().min(1),
    }),
  })
  .meta({ id: 'OffsetPaginationMeta' });
export const cursorMetaSchema = z
  .object({
    pagination: z.object({
      result_count: z.number().int(),
      per_page: z.number().int(),
      has_more: z.boolean(),
      next_cursor: z.string().nullable(),
      prev_cursor: z.string().nullable(),
    }),
  })
  .meta({ id: 'CursorPaginationMeta' });

/**
 * The one parser of an id in a path (`/items/{id}`, `/jobs/{job_id}`, `/tokens/{id}`): a
 * positive safe integer in plain decimal; anything else (`abc`, `0`, `1e3`, beyond 2^53 - 1)
 * names no record, so 404.
 */
export function pathId(raw: string | undefined, noun = 'record'): number {
  const id = parseId(raw);
  if (id === null) throw new NotFoundError(`No ${noun} with id ${String(raw).slice(0, 40)}.`);
  return id;
}

/** Shared query schema pieces. */
export const q = {
  /**
   * An integer query parameter in [min, max] (max: MAX_ID unless given), read by parseDecimal,
   * the reader of path ids too: plain decimal digits only, so `0x10`, `1e3`, ` 7`, `01`, an
   * empty value or a repeated parameter is a 422 ("must be an integer") instead of 16, 1000, 7
   * or 0, and a value past the range is a 422 on the bound, never rounded into it. No
   * transform (only a check, then a number of the digits checked), so a `.default()` stays in
   * the OpenAPI document, where the parameter is an integer with its bounds.
   */
  int: (min: number, max: number = MAX_ID) =>
    z
      .unknown()
      .superRefine((raw, ctx) => {
        const n = parseDecimal(raw);
        if (n === null) ctx.addIssue({ code: 'custom', message: 'must be an integer', params: { expected: 'integer' }, input: raw });
        else if (n < min) ctx.addIssue({ code: 'too_small', origin: 'number', minimum: min, inclusive: true, input: n });
        else if (n > max) ctx.addIssue({ code: 'too_big', origin: 'number', maximum: max, inclusive: true, input: raw });
      })
      // Only digits checked above reach this: it makes them the number they spell.
      .pipe(z.coerce.number())
      .meta({ type: 'integer', minimum: min, maximum: max }),
  /** `a,b,c` into a list of non-empty trimmed strings. */
  list: () =>
    z
      .string()
      .max(4096)
      .transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
};
