import { adaptService, witnessedPublisher, type ServiceModule } from '@supply/kit';
import { REFERENCE_CHANGED, supply_reference_v1, type ReferenceChangedEvent } from '@supply/contracts';
import { createCalendars, getCalendar, listCalendars, updateCalendar } from './calendars/service';
import { createCustomerGroups, getCustomerGroup, listCustomerGroups, updateCustomerGroup } from './customer-groups/service';
import { openReferenceDb } from './db';
import { createHierarchyLevels, getHierarchyLevel, listHierarchyLevels, updateHierarchyLevel } from './hierarchy-levels/service';
import { ensureItemCustomerGroups, getItemCustomerGroups, listItemCustomerGroups } from './item-customer-groups/service';
import { createItemLocations, getItemLocation, listItemLocations, updateItemLocation } from './item-locations/service';
import { createItems, getItem, listItems, updateItem } from './items/service';
import { createLocations, getLocation, listLocations, updateLocation } from './locations/service';
import { lookupIds, resolveNames } from './names/service';
import { getPlanningParameters } from './planning/service';
import { getSaleType, listSaleTypes } from './sale-types/service';
import { seedDemoReference } from './seed/demo';
import { getTimingInterval, listTimingIntervals } from './timing-intervals/service';
import { createUoms, getUom, listUoms, updateUom } from './uoms/service';
import { createViews, getView, listViews, updateView } from './views/service';

/** Reference service: master data per tenant (its own database `reference`). */
export const referenceModule: ServiceModule = {
  name: 'reference',
  dependencies: [],
  async init({ config, logger, openStore, bus, metrics }) {
    const store = await openStore('reference');
    const db = await openReferenceDb(store);
    if (config.seedDemo) {
      const seeded = await seedDemoReference(store, db);
      if (seeded.length > 0) logger.info({ tenants: seeded }, 'demo reference data created');
    }
    const messages = await bus();
    const changes = await witnessedPublisher(messages, [REFERENCE_CHANGED], logger, { metrics });
    /**
     * Runs a write, then tells every gateway the tenant's reference answers are stale and waits
     * until they have heard it, so the next read on any replica sees the write.
     */
    const write = async <T>(
      tenant: string,
      run: (tenant: string) => Promise<T>,
      changed: (result: T) => boolean = () => true,
    ): Promise<T> => {
      const result = await run(tenant);
      if (!changed(result)) return result;
      const event: ReferenceChangedEvent = { tenant };
      await changes.publish(REFERENCE_CHANGED, event);
      return result;
    };
    // Every handler reads and writes only the calling tenant's records.
    const implementation = adaptService(
      supply_reference_v1.ReferenceServiceService,
      {
        listUoms: (req, ctx) => listUoms(db, ctx.requireTenant(), req),
        getUom: (req, ctx) => getUom(db, ctx.requireTenant(), req.id),
        createUoms: (req, ctx) => write(ctx.requireTenant(), (tenant) => createUoms(db, tenant, req)),
        updateUom: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateUom(db, tenant, req)),

        listHierarchyLevels: (req, ctx) => listHierarchyLevels(db, ctx.requireTenant(), req),
        getHierarchyLevel: (req, ctx) => getHierarchyLevel(db, ctx.requireTenant(), req.id),
        createHierarchyLevels: (req, ctx) => write(ctx.requireTenant(), (tenant) => createHierarchyLevels(db, tenant, req)),
        updateHierarchyLevel: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateHierarchyLevel(db, tenant, req)),

        listItems: (req, ctx) => listItems(db, ctx.requireTenant(), req),
        getItem: (req, ctx) => getItem(db, ctx.requireTenant(), req.id),
        createItems: (req, ctx) => write(ctx.requireTenant(), (tenant) => createItems(db, tenant, req)),
        updateItem: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateItem(db, tenant, req)),

        listCustomerGroups: (req, ctx) => listCustomerGroups(db, ctx.requireTenant(), req),
        getCustomerGroup: (req, ctx) => getCustomerGroup(db, ctx.requireTenant(), req.id),
        createCustomerGroups: (req, ctx) => write(ctx.requireTenant(), (tenant) => createCustomerGroups(db, tenant, req)),
        updateCustomerGroup: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateCustomerGroup(db, tenant, req)),

        listSaleTypes: (req, ctx) => listSaleTypes(db, ctx.requireTenant(), req),
        getSaleType: (req, ctx) => getSaleType(db, ctx.requireTenant(), req.id),

        listTimingIntervals: (req, ctx) => listTimingIntervals(db, ctx.requireTenant(), req),
        getTimingInterval: (req, ctx) => getTimingInterval(db, ctx.requireTenant(), req.id),

        listCalendars: (req, ctx) => listCalendars(db, ctx.requireTenant(), req),
        getCalendar: (req, ctx) => getCalendar(db, ctx.requireTenant(), req.id),
        createCalendars: (req, ctx) => write(ctx.requireTenant(), (tenant) => createCalendars(db, tenant, req)),
        updateCalendar: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateCalendar(db, tenant, req)),

        listLocations: (req, ctx) => listLocations(db, ctx.requireTenant(), req),
        getLocation: (req, ctx) => getLocation(db, ctx.requireTenant(), req.id),
        createLocations: (req, ctx) => write(ctx.requireTenant(), (tenant) => createLocations(db, tenant, req)),
        updateLocation: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateLocation(db, tenant, req)),

        listItemLocations: (req, ctx) => listItemLocations(db, ctx.requireTenant(), req),
        getItemLocation: (req, ctx) => getItemLocation(db, ctx.requireTenant(), req.id),
        createItemLocations: (req, ctx) => write(ctx.requireTenant(), (tenant) => createItemLocations(db, tenant, req)),
        updateItemLocation: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateItemLocation(db, tenant, req)),

        listViews: (req, ctx) => listViews(db, ctx.requireTenant(), req),
        getView: (req, ctx) => getView(db, ctx.requireTenant(), req),
        createViews: (req, ctx) => write(ctx.requireTenant(), (tenant) => createViews(db, tenant, req)),
        updateView: (req, ctx) => write(ctx.requireTenant(), (tenant) => updateView(db, tenant, req)),

        resolveNames: (req, ctx) => resolveNames(db, ctx.requireTenant(), req),
        lookupIds: (req, ctx) => lookupIds(db, ctx.requireTenant(), req),
        // Imports ensure the combinations of every batch; only a batch that created one changes anything.
        ensureItemCustomerGroups: (req, ctx) =>
          write(
            ctx.requireTenant(),
            (tenant) => ensureItemCustomerGroups(db, tenant, req),
            (r) => r.created > 0,
          ),
        getItemCustomerGroups: (req, ctx) => getItemCustomerGroups(db, ctx.requireTenant(), req),
        listItemCustomerGroups: (req, ctx) => listItemCustomerGroups(db, ctx.requireTenant(), req),
        getPlanningParameters: (req, ctx) => getPlanningParameters(db, ctx.requireTenant(), req),
      },
      { credential: config.serviceCredential, logger },
    );
    return {
      grpc: { definition: supply_reference_v1.ReferenceServiceService, implementation, protoFile: 'supply/reference/v1/reference.proto' },
      async stop() {
        await changes.close();
      },
      // Ready only with both its own database and the broker: reference changes are published on the bus (gateway caches drop on them).
      async health() {
        const [storeOk, busOk] = await Promise.all([
          store.ping().then(
            () => true,
            () => false,
          ),
          messages.ping().then(
            () => true,
            () => false,
          ),
        ]);
        return { ready: storeOk && busOk, checks: { store: storeOk, bus: busOk } };
      },
    };
  },
};
