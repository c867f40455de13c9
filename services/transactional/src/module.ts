import { adaptService, type ServiceModule } from '@supply/kit';
import { supply_transactional_v1 } from '@supply/protos';
import { openSales } from './sales/repository';

const MAX_PAGE = 5000;

/** Transactional service: sales, inventory, supply and financial plan rows (its own database `transactional`). */
export const transactionalModule: ServiceModule = {
  name: 'transactional',
  dependencies: ['reference'],
  async init({ config, logger, openStore }) {
    const store = await openStore('transactional');
    const sales = await openSales(store);
    const implementation = adaptService(
      supply_transactional_v1.TransactionalServiceService,
      {
        async listSales({ after_id, limit }, ctx) {
          const tenant = ctx.requireTenant();
          const n = Math.min(Math.max(limit || 100, 1), MAX_PAGE);
          // One extra row tells whether another page exists without a count.
          const rows = await sales.find({ tenant, _id: { $gt: after_id } }, { sort: [['_id', 1]], limit: n + 1 });
          return {
            records: rows.slice(0, n).map(({ _id, tenant: _t, ...r }) => ({ id: _id, ...r })),
            has_more: rows.length > n,
          };
        },
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: {
        definition: supply_transactional_v1.TransactionalServiceService,
        implementation,
        protoFile: 'supply/transactional/v1/transactional.proto',
      },
      async stop() {},
      async health() {
        const ok = await store.ping().then(() => true, () => false);
        return { ready: ok, checks: { store: ok } };
      },
    };
  },
};
