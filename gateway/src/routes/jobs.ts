import type { Clients } from '@supply/kit';
import { defineRoute, type RouteDef } from '../http/routes';

export function jobRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/jobs/:job_id',
      summary: 'Status of an asynchronous job (creating user only)',
      tag: 'Jobs',
      access: { kind: 'token', scope: null, module: null, level: 'view', cost: 'utility' },
      dialect: 'current',
      async handler({ params }) {
        const id = Number(params.job_id);
        if (!Number.isSafeInteger(id) || id < 1) {
          return { kind: 'json', status: 404, body: { message: 'No such job.' } };
        }
        const job = await clients.workflows.getJob({ job_id: id });
        return { kind: 'envelope', data: [job] };
      },
    }),
  ];
}
