import { adaptService, failureReason, retryUntilDone, type Doc, type ServiceModule } from '@supply/kit';
import { TransactionalService } from '@supply/contracts';
import { timestamp } from './common/records';
import { openInventory } from './inventory/repository';
import { applyInventory, deleteInventoryOutsideLoad, queryInventory, type InventoryDeps } from './inventory/service';
import { openFinancialPlans, openSupplyPlans, toFinancialPlanRecord, toSupplyPlanRecord } from './plans/repository';
import { listLegacySupplyPlan, queryPlans, replaceFinancialPlan, replaceSupplyPlan, type PlanDeps } from './plans/service';
import { openSales } from './sales/repository';
import { applySales, deleteSalesOutsideLoad, listLegacySales, listSales, querySales, type SalesDeps } from './sales/service';
import { seedDemoTransactional } from './seed/demo';

/** Transactional service: sales, inventory, supply and financial plan rows (its own database `transactional`). */
export const transactionalModule: ServiceModule = {
  name: 'transactional',
  dependencies: ['reference'],
  async init({ config, logger, clients, openStore }) {
    const store = await openStore('transactional');
    const now = () => timestamp(config.now);
    const sales: SalesDeps = { sales: await openSales(store), clients, now };
    const inventory: InventoryDeps = { inventory: await openInventory(store), now };
    const plans: PlanDeps = { supplyPlans: await openSupplyPlans(store), financialPlans: await openFinancialPlans(store), now };

    // Every handler reads and writes only the calling tenant's records.
    const implementation = adaptService(
      TransactionalService,
      {
        querySales: (req, ctx) => querySales(sales, ctx.requireTenant(), req),
        listSales: (req, ctx) => listSales(sales, ctx.requireTenant(), req),
        listLegacySales: (req, ctx) => listLegacySales(sales, ctx.requireTenant(), req),
        applySales: (req, ctx) => applySales(sales, ctx.requireTenant(), req),
        deleteSalesOutsideLoad: (req, ctx) => deleteSalesOutsideLoad(sales, ctx.requireTenant(), req),

        queryInventory: (req, ctx) => queryInventory(inventory, ctx.requireTenant(), req),
        applyInventory: (req, ctx) => applyInventory(inventory, ctx.requireTenant(), req),
        deleteInventoryOutsideLoad: (req, ctx) => deleteInventoryOutsideLoad(inventory, ctx.requireTenant(), req),

        replaceSupplyPlan: (req, ctx) => replaceSupplyPlan(plans, ctx.requireTenant(), req),
        replaceFinancialPlan: (req, ctx) => replaceFinancialPlan(plans, ctx.requireTenant(), req),
        async querySupplyPlans(req, ctx) {
          const { records, page } = await queryPlans(plans.supplyPlans, ctx.requireTenant(), req);
          return { records: records.map(toSupplyPlanRecord), page };
        },
        async queryFinancialPlans(req, ctx) {
          const { records, page } = await queryPlans(plans.financialPlans, ctx.requireTenant(), req);
          return { records: records.map(toFinancialPlanRecord), page };
        },
        listLegacySupplyPlan: (req, ctx) => listLegacySupplyPlan(plans, ctx.requireTenant(), req),
      },
      { credential: config.serviceCredential, logger },
    );
    let stopped = false;
    let seeding: Promise<unknown> = Promise.resolve();
    return {
      grpc: {
        definition: TransactionalService,
        implementation,
        protoFile: 'supply/transactional/v1/transactional.proto',
      },
      // The demo data needs reference ids, and reference may come up later than this process:
      // seeding retries in the background until reference answers, and the service serves meanwhile.
      async start() {
        if (!config.seedDemo) return;
        stopped = false;
        const marks = await store.collection<Doc>({ name: 'demo_seeds' });
        const seed = async () => {
          const seeded = await seedDemoTransactional({ clients, sales, inventory, marks, logger });
          if (seeded.length > 0) logger.info({ tenants: seeded }, 'demo sales and inventory created');
        };
        try {
          // Reference is usually up (it starts first in one process): seeded before start() returns.
          await seed();
          return;
        } catch (err) {
          logger.warn({ err: failureReason(err) }, 'demo sales and inventory not seeded yet; retrying in the background');
        }
        seeding = retryUntilDone(seed, {
          stopped: () => stopped,
          onFailure: (err, attempt, retryInMs) =>
            retryInMs === null
              ? logger.error({ err, attempt }, 'demo sales and inventory not seeded; an unmarked tenant is seeded on the next start')
              : logger.warn({ err: failureReason(err), attempt, retryInMs }, 'demo sales and inventory not seeded yet; retrying'),
        });
      },
      async stop() {
        stopped = true;
        await seeding;
      },
      async health() {
        const ok = await store.ping().then(
          () => true,
          () => false,
        );
        return { ready: ok, checks: { store: ok } };
      },
    };
  },
};
