import { adaptService, type ServiceModule } from '@supply/kit';
import { supply_reference_v1 } from '@supply/protos';
import { openUoms } from './uoms/repository';
import { listUoms, seedUoms } from './uoms/service';

const DEMO_TENANTS = ['demo', 'acme'];

/** Reference service: master data per tenant (its own database `reference`). */
export const referenceModule: ServiceModule = {
  name: 'reference',
  dependencies: [],
  async init({ config, logger, openStore }) {
    const store = await openStore('reference');
    const uoms = await openUoms(store);
    if (config.seedDemo) for (const tenant of DEMO_TENANTS) await seedUoms(uoms, tenant);
    const implementation = adaptService(
      supply_reference_v1.ReferenceServiceService,
      {
        listUoms: (request, ctx) => listUoms(uoms, ctx.requireTenant(), request),
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: { definition: supply_reference_v1.ReferenceServiceService, implementation, protoFile: 'supply/reference/v1/reference.proto' },
      async stop() {},
      async health() {
        const ok = await store.ping().then(() => true, () => false);
        return { ready: ok, checks: { store: ok } };
      },
    };
  },
};
