import { adaptService, NotFoundError, type ServiceModule } from '@supply/kit';
import { supply_workflows_v1 } from '@supply/protos';
import { openJobs } from './jobs/repository';

/** Workflows service: bulk syncs, file imports and their jobs (its own database `workflows`). */
export const workflowsModule: ServiceModule = {
  name: 'workflows',
  dependencies: ['reference', 'transactional'],
  async init({ config, logger, openStore }) {
    const store = await openStore('workflows');
    const jobs = await openJobs(store);
    const implementation = adaptService(
      supply_workflows_v1.WorkflowServiceService,
      {
        async getJob({ job_id }, ctx) {
          const tenant = ctx.requireTenant();
          const job = await jobs.findById(job_id);
          // Readable by the creating user's tokens only; anyone else sees no such job.
          if (!job || job.tenant !== tenant || job.user_id !== ctx.principal?.userId) throw new NotFoundError('No such job.');
          return {
            id: job._id,
            kind: job.kind,
            status: job.status,
            progress: job.progress,
            result: job.result,
            errors: job.errors,
            errors_count: job.errors_count,
            token_id: job.token_id,
            user_id: job.user_id,
            created_at: job.created_at,
            started_at: job.started_at ?? '',
            finished_at: job.finished_at ?? '',
          };
        },
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: { definition: supply_workflows_v1.WorkflowServiceService, implementation, protoFile: 'supply/workflows/v1/workflows.proto' },
      async stop() {},
      async health() {
        const ok = await store.ping().then(() => true, () => false);
        return { ready: ok, checks: { store: ok } };
      },
    };
  },
};
