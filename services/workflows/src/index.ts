export { workflowsModule } from './module';

// Beyond the module, for operators' tools and tests that inspect or fault the service's own store.
export { CHUNKS_QUEUE } from './sync/dispatch';
export { openJobs, timestamp, ZERO_COUNTS, type JobDoc } from './jobs/repository';
export { openStaging } from './sync/staging';
export { parseJobEvent } from './jobs/events';
export { foldJobEvent } from './jobs/fold';
