import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Clients } from '@supply/kit';
import type { supply_workflows_v1 as pb } from '@supply/contracts';
import { scopeAllows, type Principal } from '../auth/guard';
import { requestContext } from '../http/context';
import { problem } from '../http/errors';
import { defineRoute, emptyMetaSchema, linksSchema, type Access, type Reply, type RouteDef } from '../http/routes';
import { streamImport } from '../uploads/import';
import { jobResource, jobSchema } from './jobs';

const PREFIX = '/:tenant/api/v1/workflows';
const TAG = 'Workflows';
/** A JSON sync of 10,000 rows (the most one request takes) gets this long to stage or dry-run. */
export const SYNC_DEADLINE_MS = 120_000;

const access = (module: 'demand' | 'inventory'): Access => ({
  kind: 'token',
  scope: 'public_api.workflow',
  module,
  level: 'planner',
  cost: 'workflow',
});

/** The Idempotency-Key header ("" = none; the service checks its form). */
export function idempotencyKeyOf(req: Request): string {
  return req.get('Idempotency-Key') ?? '';
}

/** Replace mode needs the `public_api.workflow.replace` scope too, which only the body (its `mode`) says is needed. */
function assertReplaceAllowed(res: Response, mode: unknown): void {
  const principal: Principal = res.locals.principal;
  if (mode === 'replace' && !scopeAllows(principal.scopes, 'public_api.workflow.replace')) {
    throw problem('insufficient-scope', 'Replace mode needs the public_api.workflow.replace scope in addition to public_api.workflow.');
  }
}

const dryRunSchema = z
  .object({
    dry_run: z.literal(true),
    total: z.number(),
    result: z.object({ created: z.number(), updated: z.number(), deleted: z.number(), unchanged: z.number(), failed: z.number() }),
    errors: z.array(z.object({ row: z.number(), field: z.string(), message: z.string() })),
    errors_count: z.number(),
  })
  .meta({ id: 'SyncDryRun' });

/** 202 with the job, or 200 with what a dry run found; `Idempotent-Replayed` on a replay. */
function present(tenant: string, noun: string, answer: pb.SyncAnswer): Reply {
  const headers: Record<string, string> = answer.replayed ? { 'Idempotent-Replayed': 'true' } : {};
  const outcome = answer.outcome!;
  if (outcome.$case === 'dry_run') {
    const d = outcome.dry_run;
    return {
      kind: 'envelope',
      status: 200,
      message: `Dry run completed: nothing was written. ${d.total - d.invalid} of ${d.total} rows are valid.`,
      data: [
        {
          dry_run: true,
          total: d.total,
          result: { created: d.created, updated: d.updated, deleted: d.deleted, unchanged: d.unchanged, failed: d.invalid },
          errors: d.errors.map((e) => ({ row: e.row, field: e.field, message: e.message })),
          errors_count: d.errors_count,
        } satisfies z.infer<typeof dryRunSchema>,
      ],
      headers,
    };
  }
  const job = outcome.job;
  const location = `/${tenant}/api/v1/jobs/${job.id}`;
  return {
    kind: 'envelope',
    status: 202,
    message: `The ${noun} was accepted as job ${job.id}; follow it at GET ${location}.`,
    data: [jobResource(job)],
    headers: { ...headers, Location: location },
  };
}

/** The JSON sync body as documented; the workflows service checks it (row errors name `data.<n>.<field>`). */
const flag = z.union([z.boolean(), z.enum(['1', '0', 'true', 'false'])]);
const quantity = z.union([z.number().min(0), z.string()]);
const salesRow = z
  .object({
    sale_type_name: z.string(),
    item_name: z.string(),
    customer_group_name: z.string(),
    sell_date: z.iso.date(),
    timing_interval: z.enum(['day', 'week', 'month', 'year']),
    quantity,
    uom: z.string(),
  })
  .meta({
    id: 'SalesSyncRow',
    examples: [
      {
        sale_type_name: 'History',
        item_name: 'SKU-0001',
        customer_group_name: 'Retail',
        sell_date: '2026-05-04',
        timing_interval: 'week',
        quantity: 12.5,
        uom: 'ea',
      },
    ],
  });
const inventoryRow = z
  .object({
    item_name: z.string(),
    location_name: z.string(),
    inventory_date: z.iso.date(),
    quantity,
    uom: z.string(),
    bin_name: z.string().nullish(),
    lot_name: z.string().nullish(),
  })
  .meta({
    id: 'InventorySyncRow',
    examples: [{ item_name: 'SKU-0001', location_name: 'DC-East', inventory_date: '2026-05-04', quantity: 40, uom: 'ea' }],
  });
const syncBody = (row: z.ZodType, scope: z.ZodType) =>
  z.object({
    mode: z
      .enum(['upsert', 'replace'])
      .optional()
      .describe('upsert (default), or replace inside `scope` (needs public_api.workflow.replace)'),
    dry_run: flag.optional(),
    scope: scope.optional().describe('Names, any case; required for replace'),
    options: z
      .object({ allow_record_creation: flag.optional(), allow_record_update: flag.optional(), continue_on_error: flag.optional() })
      .optional(),
    data: z.array(row).min(1).max(10_000),
  });
const syncBodies = {
  sales: syncBody(salesRow, z.object({ sale_type: z.string().optional(), customer_group: z.string().optional() })),
  inventory: syncBody(inventoryRow, z.object({ location: z.string().optional(), item: z.string().optional() })),
};

const responses = z.object({
  message: z.string(),
  data: z.array(z.union([jobSchema, dryRunSchema])),
  meta: emptyMetaSchema,
  links: linksSchema,
});

export function workflowRoutes(clients: Clients): RouteDef[] {
  const sync = (entity: 'sales' | 'inventory', module: 'demand' | 'inventory'): RouteDef[] => {
    const noun = `${entity} sync`;
    return [
      defineRoute({
        method: 'post',
        path: `${PREFIX}/sync-${entity}`,
        summary: `Sync ${entity} rows (JSON, up to 10,000 rows): 202 with a job, or 200 for a dry run; Idempotency-Key supported`,
        tag: TAG,
        access: access(module),
        dialect: 'current',
        accepts: 'json',
        // Not `body`: the workflows service validates the body, naming row fields (`data.3.quantity`).
        handlerBody: syncBodies[entity],
        response: responses,
        successStatus: 202,
        alsoAnswers: [200],
        serviceIdempotency: true,
        async handler({ req, res, params }) {
          const body: unknown = req.body ?? null;
          assertReplaceAllowed(res, (body as { mode?: unknown } | null)?.mode);
          const answer = await clients.workflows.submitSync(
            { entity, shape: 'sync', body_json: JSON.stringify(body), idempotency_key: idempotencyKeyOf(req) },
            { deadlineMs: SYNC_DEADLINE_MS },
          );
          return present(params.tenant!, noun, answer);
        },
      }),
      defineRoute({
        method: 'post',
        path: `${PREFIX}/sync-${entity}/import`,
        summary: `Sync ${entity} rows from a CSV file (multipart \`file\`, at most 10240 KB; mode, dry_run, scope, options, headers_match_exactly, field_mappings as fields)`,
        tag: TAG,
        access: access(module),
        dialect: 'current',
        accepts: 'multipart',
        response: responses,
        successStatus: 202,
        alsoAnswers: [200],
        serviceIdempotency: true,
        async handler({ req, res, params }) {
          const answer = await streamImport(clients, req, {
            entity,
            shape: 'sync',
            idempotencyKey: idempotencyKeyOf(req),
            context: requestContext(res),
            checkFields: (fields) => assertReplaceAllowed(res, fields.mode),
          });
          return present(params.tenant!, `${entity} import`, answer);
        },
      }),
    ];
  };
  return [...sync('sales', 'demand'), ...sync('inventory', 'inventory')];
}
