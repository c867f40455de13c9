import type { Collection, Store } from '@supply/kit';
import { CALENDARS, type CalendarRecord } from './calendars/repository';
import { CUSTOMER_GROUPS, type CustomerGroupRecord } from './customer-groups/repository';
import { HIERARCHY_LEVELS, type HierarchyLevelRecord } from './hierarchy-levels/repository';
import { ITEM_CUSTOMER_GROUPS, type ItemCustomerGroupRecord } from './item-customer-groups/repository';
import { ITEM_LOCATIONS, type ItemLocationRecord } from './item-locations/repository';
import { ITEMS, type ItemRecord } from './items/repository';
import { LOCATIONS, type LocationRecord } from './locations/repository';
import { SALE_TYPES, type SaleTypeRecord } from './sale-types/repository';
import { TIMING_INTERVALS, type TimingIntervalRecord } from './timing-intervals/repository';
import { UOMS, type UomRecord } from './uoms/repository';
import { VIEWS, type ViewRecord } from './views/repository';

/** The reference service's collections in its own database; every record carries its tenant. */
export interface ReferenceDb {
  uoms: Collection<UomRecord>;
  levels: Collection<HierarchyLevelRecord>;
  items: Collection<ItemRecord>;
  customerGroups: Collection<CustomerGroupRecord>;
  itemCustomerGroups: Collection<ItemCustomerGroupRecord>;
  saleTypes: Collection<SaleTypeRecord>;
  timingIntervals: Collection<TimingIntervalRecord>;
  calendars: Collection<CalendarRecord>;
  locations: Collection<LocationRecord>;
  itemLocations: Collection<ItemLocationRecord>;
  views: Collection<ViewRecord>;
}

export async function openReferenceDb(store: Store): Promise<ReferenceDb> {
  const [uoms, levels, items, customerGroups, itemCustomerGroups, saleTypes, timingIntervals, calendars, locations, itemLocations, views] =
    await Promise.all([
      store.collection<UomRecord>(UOMS),
      store.collection<HierarchyLevelRecord>(HIERARCHY_LEVELS),
      store.collection<ItemRecord>(ITEMS),
      store.collection<CustomerGroupRecord>(CUSTOMER_GROUPS),
      store.collection<ItemCustomerGroupRecord>(ITEM_CUSTOMER_GROUPS),
      store.collection<SaleTypeRecord>(SALE_TYPES),
      store.collection<TimingIntervalRecord>(TIMING_INTERVALS),
      store.collection<CalendarRecord>(CALENDARS),
      store.collection<LocationRecord>(LOCATIONS),
      store.collection<ItemLocationRecord>(ITEM_LOCATIONS),
      store.collection<ViewRecord>(VIEWS),
    ]);
  return {
    uoms,
    levels,
    items,
    customerGroups,
    itemCustomerGroups,
    saleTypes,
    timingIntervals,
    calendars,
    locations,
    itemLocations,
    views,
  };
}
