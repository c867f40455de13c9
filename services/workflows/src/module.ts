import { AppError, adaptService, type ServiceModule, type Subscription } from '@supply/kit';
import { JOB_EVENTS_QUEUE, supply_workflows_v1 } from '@supply/contracts';
import { IdempotentAnswers } from './idempotency/answers';
import { IdempotencyKeys } from './idempotency/keys';
import { consumeJobEvents } from './jobs/events';
import { jobMessage, JobRecords } from './jobs/records';
import { jobMetrics } from './jobs/metrics';
import { openJobs } from './jobs/repository';
import { ChunkProcessor } from './sync/chunks';
import { CHUNKS_QUEUE, Dispatcher } from './sync/dispatch';
import { ScopeLocks } from './sync/scope-locks';
import { DEFAULT_LIMITS, SyncService } from './sync/service';
import { openStaging } from './sync/staging';
import { Sweeper } from './sync/sweeper';
import { ChunkWorker } from './sync/worker';

/** Chunks one process works on at once. */
const CHUNK_PREFETCH = 4;
const JOB_KIND = /^[a-z0-9_]{1,64}$/;

/**
 * Workflows service: bulk syncs, file imports and every job's record (its own database
 * `workflows`). Each process running it is also a sync worker and a job-event folder.
 */
export const workflowsModule: ServiceModule = {
  name: 'workflows',
  dependencies: ['reference', 'transactional'],
  workQueues: [CHUNKS_QUEUE, JOB_EVENTS_QUEUE],
  async init({ config, logger, openStore, bus: openBus, clients, metrics }) {
    const store = await openStore('workflows');
    const bus = await openBus();
    const jobs = new JobRecords(await openJobs(store), jobMetrics(metrics));
    const staging = await openStaging(store);
    const keys = await IdempotencyKeys.open(store);
    const locks = await ScopeLocks.open(store);
    const processor = new ChunkProcessor(clients);
    const dispatcher = new Dispatcher(bus, jobs, staging, locks, logger);
    const syncs = new SyncService({
      jobs,
      staging,
      keys,
      locks,
      processor,
      dispatcher,
      clients,
      logger,
      limits: { ...DEFAULT_LIMITS, activeJobsPerTenant: config.SYNC_JOBS_PER_TENANT },
    });
    const worker = new ChunkWorker(jobs.jobs, staging, processor, clients, bus, logger, metrics);
    const sweeper = new Sweeper({ jobs, staging, keys, dispatcher, worker, bus, logger, outageWindowMs: config.OUTAGE_WINDOW_MS });
    const answers = new IdempotentAnswers(keys);

    const implementation = adaptService(
      supply_workflows_v1.WorkflowServiceService,
      {
        submitSync: (request, ctx) => syncs.submit(request, ctx),
        importFile: (requests, ctx) => syncs.importFile(requests, ctx),
        async getJob({ job_id }, ctx) {
          return jobMessage(await jobs.forOwner(job_id, ctx.requireTenant(), ctx.principal));
        },
        async createJob({ kind, total }, ctx) {
          const tenant = ctx.requireTenant();
          if (!ctx.principal) throw new AppError('unauthenticated', 'CreateJob needs the x-principal the job is created for.');
          if (!JOB_KIND.test(kind)) throw new AppError('invalid_argument', 'A job kind is 1-64 of a-z, 0-9 and _.');
          if (!Number.isSafeInteger(total) || total < 0)
            throw new AppError('invalid_argument', 'A job total is a whole number, 0 or more.');
          return jobMessage(await jobs.create({ tenant, kind, principal: ctx.principal, total }));
        },
        claimIdempotencyKey: (request, ctx) => answers.claim(request, ctx),
        completeIdempotencyKey: (request, ctx) => answers.complete(request, ctx),
        releaseIdempotencyKey: (request, ctx) => answers.release(request, ctx),
      },
      { credential: config.serviceCredential, logger },
    );

    const subscriptions: Subscription[] = [];
    return {
      grpc: { definition: supply_workflows_v1.WorkflowServiceService, implementation, protoFile: 'supply/workflows/v1/workflows.proto' },
      async start() {
        subscriptions.push(await consumeJobEvents(bus, jobs, (job) => dispatcher.act(job), logger));
        subscriptions.push(await bus.consume(CHUNKS_QUEUE, worker.handle, { prefetch: CHUNK_PREFETCH, onDeadLetter: worker.deadLettered }));
        sweeper.start();
      },
      async stop() {
        await sweeper.stop();
        await Promise.all(subscriptions.splice(0).map((s) => s.close()));
      },
      async health() {
        const [storeOk, busOk] = await Promise.all([
          store.ping().then(
            () => true,
            () => false,
          ),
          bus.ping().then(
            () => true,
            () => false,
          ),
        ]);
        return { ready: storeOk && busOk, checks: { store: storeOk, bus: busOk } };
      },
    };
  },
};
