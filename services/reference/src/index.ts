export { referenceModule } from './module';

// Beyond the module: the items store, for the benchmarks.
export { ITEMS, type ItemRecord } from './items/repository';
export { findIn } from './common/reads';
