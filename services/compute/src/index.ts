export { computeModule } from './module';

// Beyond the module, for tests that inspect the service's own store.
export { openPlanRepositories } from './supply-planning/repository';
