/**
 * Reads what a batch of item-locations needs for planning, in bulk and over gRPC: the tenant's
 * customer groups and locations (demand ownership), how many locations share each item's demand,
 * the items' Forecast and History sales around the horizon, and the latest stock on hand.
 */
import type { Clients } from '@supply/kit';
import type { supply_reference_v1 as ref, supply_transactional_v1 as tx } from '@supply/contracts';
import type { BucketClock } from './calendar';
import { DemandOwnership, FORECAST, groupDemand, HISTORY, type GroupDemand, type SalesPoint } from './inputs';

/** Names per sales or inventory query: up to 8 name ranges are merged on an index (docs/transactional.md). */
const NAMES_PER_QUERY = 8;
const PAGE = 5000;
/** Calls of one batch in flight at once. */
export const CALLS_IN_FLIGHT = 8;

export interface OnHand {
  quantity: number;
  /** Inventory date used; "" when the item-location has no inventory record on or before plan start. */
  date: string;
}

export interface PlanningData {
  ownership: DemandOwnership;
  /** Item id -> its item-locations at locations that share demand (no customer group of their own). */
  sharingLocations: Map<number, number>;
  /** Item id -> its sales by customer group, on the plan's buckets. */
  demand: Map<number, Map<number, GroupDemand>>;
  /** `item_id:location_id` -> stock at plan start. */
  onHand: Map<string, OnHand>;
}

export const itemLocationKey = (itemId: number, locationId: number) => `${itemId}:${locationId}`;

/** Runs `fn` over `items` with at most `limit` calls pending. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

const chunk = <T>(all: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size));

const listPage = (page: number, perPage: number, itemName = ''): ref.ListRequest => ({
  page: { page, per_page: perPage, total: 0 },
  filter_name: '',
  filter_item_name: itemName,
  filter_location_name: '',
});

/** Every record of an offset list. */
async function listAll<R>(
  list: (request: ref.ListRequest) => Promise<{ records: R[]; page?: ref.OffsetPage }>,
  perPage: number,
  itemName = '',
): Promise<R[]> {
  const all: R[] = [];
  for (let page = 1; ; page++) {
    const response = await list(listPage(page, perPage, itemName));
    all.push(...response.records);
    if (response.records.length < perPage || all.length >= (response.page?.total ?? 0)) return all;
  }
}

/** Customer groups and locations of the tenant: which group is whose. */
async function readOwnership(clients: Clients): Promise<DemandOwnership> {
  const [groups, locations] = await Promise.all([
    listAll((request) => clients.reference.listCustomerGroups(request), 100),
    listAll((request) => clients.reference.listLocations(request), 1000),
  ]);
  return new DemandOwnership(
    groups,
    locations.map((location) => location.name),
  );
}

/** For each item: how many of its item-locations (in any view) are at locations that share demand. */
async function readSharingLocations(
  clients: Clients,
  ownership: DemandOwnership,
  itemNames: Map<number, string>,
): Promise<Map<number, number>> {
  const entries = await mapLimit([...itemNames], CALLS_IN_FLIGHT, async ([itemId, name]) => {
    const placements = await listAll((request) => clients.reference.listItemLocations(request), 100, name);
    return [itemId, placements.filter((p) => p.item_id === itemId && ownership.sharesDemand(p.location_name)).length] as const;
  });
  return new Map(entries);
}

/** History and Forecast sales of the items from a year before plan start to the horizon's end. */
async function readDemand(
  clients: Clients,
  clock: BucketClock,
  itemNames: Map<number, string>,
): Promise<Map<number, Map<number, GroupDemand>>> {
  const points = new Map<number, SalesPoint[]>([...itemNames.keys()].map((id) => [id, []]));
  const filter: tx.SalesFilter = {
    item_names: [],
    customer_group_names: [],
    sale_type_names: ['History', 'Forecast'],
    timing_intervals: [],
    sell_date_from: clock.startOf(-Math.max(clock.yearShift, clock.sellThroughWindow)),
    sell_date_to: clock.endOf(clock.buckets - 1),
    item_customer_group_ids: [],
  };
  await mapLimit(chunk([...itemNames.values()], NAMES_PER_QUERY), CALLS_IN_FLIGHT, async (names) => {
    let after = '';
    for (;;) {
      const response = await clients.transactional.querySales({
        filter: { ...filter, item_names: names },
        page: { per_page: PAGE, sort: [], after, backward: false },
        include_hierarchy: false,
      });
      for (const record of response.records) {
        const type = record.sale_type_name.toLowerCase();
        if (type !== HISTORY && type !== FORECAST) continue;
        points
          .get(record.item_id)
          ?.push({ customer_group_id: record.customer_group_id, sale_type: type, sell_date: record.sell_date, quantity: record.quantity });
      }
      if (!response.page?.has_more) return;
      after = response.page.last_position;
    }
  });
  return new Map([...points].map(([itemId, records]) => [itemId, groupDemand(clock, records)]));
}

/**
 * The latest stock on or before plan start per wanted item-location: the records of its latest
 * inventory date summed (every bin and lot). Walks newest first and stops once every wanted
 * item-location has its date and the records left are older.
 */
async function readOnHand(clients: Clients, clock: BucketClock, wanted: ReadonlyArray<ref.ItemLocation>): Promise<Map<string, OnHand>> {
  const onHand = new Map<string, OnHand>();
  const wantedKeys = new Set(wanted.map((il) => itemLocationKey(il.item_id, il.location_id)));
  const itemNames = [...new Set(wanted.map((il) => il.item_name))];
  const locationNames = [...new Set(wanted.map((il) => il.location_name))];
  await mapLimit(chunk(itemNames, NAMES_PER_QUERY), CALLS_IN_FLIGHT, async (names) => {
    const keys = new Set(wanted.filter((il) => names.includes(il.item_name)).map((il) => itemLocationKey(il.item_id, il.location_id)));
    let found = 0;
    let after = '';
    for (;;) {
      const response = await clients.transactional.queryInventory({
        filter: {
          item_names: names,
          location_names: locationNames.length <= 100 ? locationNames : [],
          inventory_date_from: '',
          inventory_date_to: clock.periodStarts[0]!,
        },
        page: { per_page: PAGE, sort: [{ field: 'inventory_date', descending: true }], after, backward: false },
      });
      for (const record of response.records) {
        const key = itemLocationKey(record.item_id, record.location_id);
        if (!wantedKeys.has(key)) continue;
        const seen = onHand.get(key);
        if (!seen) {
          onHand.set(key, { quantity: record.quantity, date: record.inventory_date });
          found++;
        } else if (seen.date === record.inventory_date) {
          seen.quantity += record.quantity;
        }
      }
      const last = response.records.at(-1);
      const allFound = found >= keys.size && last !== undefined && [...keys].every((key) => onHand.get(key)!.date > last.inventory_date);
      if (!response.page?.has_more || allFound) return;
      after = response.page.last_position;
    }
  });
  return onHand;
}

/** Everything a batch of item-locations needs besides its own parameters. */
export async function readPlanningData(
  clients: Clients,
  clock: BucketClock,
  itemLocations: ReadonlyArray<ref.ItemLocation>,
): Promise<PlanningData> {
  const owners = await readOwnership(clients);
  const itemNames = new Map(itemLocations.map((il) => [il.item_id, il.item_name]));
  const sharingItems = new Map(itemLocations.filter((il) => owners.sharesDemand(il.location_name)).map((il) => [il.item_id, il.item_name]));
  const [sharingLocations, demand, onHand] = await Promise.all([
    readSharingLocations(clients, owners, sharingItems),
    readDemand(clients, clock, itemNames),
    readOnHand(clients, clock, itemLocations),
  ]);
  return { ownership: owners, sharingLocations, demand, onHand };
}
