export { computeModule } from './module';

// The pure engines, as libraries (the forecast CLI and the benchmarks use them directly).
export * as forecastEngine from './engines/forecast/index';
export * as mrpEngine from './engines/mrp/index';

// Beyond the module, for tests that inspect the service's own store.
export { openPlanRepositories } from './supply-planning/repository';
