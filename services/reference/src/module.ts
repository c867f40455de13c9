import { adaptService, type ServiceModule } from '@supply/kit';
import { supply_reference_v1 } from '@supply/protos';
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
  async init({ config, logger, openStore }) {
    const store = await openStore('reference');
    const db = await openReferenceDb(store);
    if (config.seedDemo) {
      const seeded = await seedDemoReference(store, db);
      if (seeded.length > 0) logger.info({ tenants: seeded }, 'demo reference data created');
    }
    // Every handler reads and writes only the calling tenant's records.
    const implementation = adaptService(
      supply_reference_v1.ReferenceServiceService,
      {
        listUoms: (req, ctx) => listUoms(db, ctx.requireTenant(), req),
        getUom: (req, ctx) => getUom(db, ctx.requireTenant(), req.id),
        createUoms: (req, ctx) => createUoms(db, ctx.requireTenant(), req),
        updateUom: (req, ctx) => updateUom(db, ctx.requireTenant(), req),

        listHierarchyLevels: (req, ctx) => listHierarchyLevels(db, ctx.requireTenant(), req),
        getHierarchyLevel: (req, ctx) => getHierarchyLevel(db, ctx.requireTenant(), req.id),
        createHierarchyLevels: (req, ctx) => createHierarchyLevels(db, ctx.requireTenant(), req),
        updateHierarchyLevel: (req, ctx) => updateHierarchyLevel(db, ctx.requireTenant(), req),

        listItems: (req, ctx) => listItems(db, ctx.requireTenant(), req),
        getItem: (req, ctx) => getItem(db, ctx.requireTenant(), req.id),
        createItems: (req, ctx) => createItems(db, ctx.requireTenant(), req),
        updateItem: (req, ctx) => updateItem(db, ctx.requireTenant(), req),

        listCustomerGroups: (req, ctx) => listCustomerGroups(db, ctx.requireTenant(), req),
        getCustomerGroup: (req, ctx) => getCustomerGroup(db, ctx.requireTenant(), req.id),
        createCustomerGroups: (req, ctx) => createCustomerGroups(db, ctx.requireTenant(), req),
        updateCustomerGroup: (req, ctx) => updateCustomerGroup(db, ctx.requireTenant(), req),

        listSaleTypes: (req, ctx) => listSaleTypes(db, ctx.requireTenant(), req),
        getSaleType: (req, ctx) => getSaleType(db, ctx.requireTenant(), req.id),

        listTimingIntervals: (req, ctx) => listTimingIntervals(db, ctx.requireTenant(), req),
        getTimingInterval: (req, ctx) => getTimingInterval(db, ctx.requireTenant(), req.id),

        listCalendars: (req, ctx) => listCalendars(db, ctx.requireTenant(), req),
        getCalendar: (req, ctx) => getCalendar(db, ctx.requireTenant(), req.id),
        createCalendars: (req, ctx) => createCalendars(db, ctx.requireTenant(), req),
        updateCalendar: (req, ctx) => updateCalendar(db, ctx.requireTenant(), req),

        listLocations: (req, ctx) => listLocations(db, ctx.requireTenant(), req),
        getLocation: (req, ctx) => getLocation(db, ctx.requireTenant(), req.id),
        createLocations: (req, ctx) => createLocations(db, ctx.requireTenant(), req),
        updateLocation: (req, ctx) => updateLocation(db, ctx.requireTenant(), req),

        listItemLocations: (req, ctx) => listItemLocations(db, ctx.requireTenant(), req),
        getItemLocation: (req, ctx) => getItemLocation(db, ctx.requireTenant(), req.id),
        createItemLocations: (req, ctx) => createItemLocations(db, ctx.requireTenant(), req),
        updateItemLocation: (req, ctx) => updateItemLocation(db, ctx.requireTenant(), req),

        listViews: (req, ctx) => listViews(db, ctx.requireTenant(), req),
        getView: (req, ctx) => getView(db, ctx.requireTenant(), req),
        createViews: (req, ctx) => createViews(db, ctx.requireTenant(), req),
        updateView: (req, ctx) => updateView(db, ctx.requireTenant(), req),

        resolveNames: (req, ctx) => resolveNames(db, ctx.requireTenant(), req),
        lookupIds: (req, ctx) => lookupIds(db, ctx.requireTenant(), req),
        ensureItemCustomerGroups: (req, ctx) => ensureItemCustomerGroups(db, ctx.requireTenant(), req),
        getItemCustomerGroups: (req, ctx) => getItemCustomerGroups(db, ctx.requireTenant(), req),
        listItemCustomerGroups: (req, ctx) => listItemCustomerGroups(db, ctx.requireTenant(), req),
        getPlanningParameters: (req, ctx) => getPlanningParameters(db, ctx.requireTenant(), req),
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
