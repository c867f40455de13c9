import { z } from 'zod';
import type { Clients } from '@supply/kit';
import { JOB_STATUSES, type supply_workflows_v1 as pb } from '@supply/contracts';
import { defineRoute, emptyMetaSchema, linksSchema, pathId, type RouteDef } from '../http/routes';

const counts = z
  .object({ created: z.number(), updated: z.number(), deleted: z.number(), unchanged: z.number(), failed: z.number() })
  .meta({ id: 'JobCounts' });
const rowError = z.object({ row: z.number(), field: z.string(), message: z.string() }).meta({ id: 'RowError' });

/** The job resource of GET /jobs/{id} and of every 202 (a 202 shows it queued). */
export const jobSchema = z
  .object({
    job_id: z.number(),
    kind: z.string(),
    status: z.enum(JOB_STATUSES),
    progress: z.object({ processed: z.number(), total: z.number() }),
    result: counts,
    errors: z.array(rowError),
    errors_count: z.number(),
    message: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'Job' });

export function jobResource(job: pb.Job): z.infer<typeof jobSchema> {
  const r = job.result!;
  return {
    job_id: job.id,
    kind: job.kind,
    status: job.status as z.infer<typeof jobSchema>['status'],
    progress: { processed: job.progress?.processed ?? 0, total: job.progress?.total ?? 0 },
    result: { created: r.created, updated: r.updated, deleted: r.deleted, unchanged: r.unchanged, failed: r.failed },
    errors: job.errors.map((e) => ({ row: e.row, field: e.field, message: e.message })),
    errors_count: job.errors_count,
    message: job.message || null,
    created_at: job.created_at,
    updated_at: job.updated_at,
    started_at: job.started_at || null,
    finished_at: job.finished_at || null,
  };
}

export function jobRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/jobs/:job_id',
      summary: 'Status of an asynchronous job (tokens of the user who started it; anyone else 404)',
      tag: 'Jobs',
      access: { kind: 'token', scope: null, module: null, level: 'view', cost: 'utility' },
      dialect: 'current',
      response: z.object({ data: z.array(jobSchema), meta: emptyMetaSchema, links: linksSchema }),
      async handler({ params }) {
        const job = await clients.workflows.getJob({ job_id: pathId(params.job_id, 'job') });
        return { kind: 'envelope', data: [jobResource(job)] };
      },
    }),
  ];
}
