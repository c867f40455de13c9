export { transactionalModule } from './module';

// Beyond the module: the sales store and its operations, for the benchmarks and for tests of
// services that read and write sales (each against a store of its own).
export { openSales, SALES_PAGES } from './sales/repository';
export { applySales, deleteSalesOutsideLoad, listSales, type SalesDeps } from './sales/service';
export { readPage } from './common/pages';
export { timestamp } from './common/records';
