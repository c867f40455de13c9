/**
 * Demo transactional data for `demo` and `acme`: two years of weekly History sales for every
 * item x customer group (a partner's own account: the items stocked at the partner, its
 * sell-through) and the stock on hand of every item-location, written through the same apply
 * path as sales and inventory syncs. Ids and names come from the reference service over gRPC; a mark per tenant makes it run once.
 */
import { seededRandom, seedOf, type CallOverrides, type Clients, type Collection, type Doc, type Logger } from '@supply/kit';
import type { supply_reference_v1 as ref, supply_transactional_v1 as pb } from '@supply/contracts';
import { MAX_BULK, timestamp } from '../common/records';
import { applyInventory, type InventoryDeps } from '../inventory/service';
import { applySales, type SalesDeps } from '../sales/service';
import { datesFrom, demandSeries, SERIES_KINDS } from './series';

export const DEMO_TENANTS = ['demo', 'acme'] as const;
/** 104 Mondays ending the week before the demo calendar `Weekly` (and view `Default`) begins, 2025-01-06. */
export const HISTORY_START = '2023-01-09';
export const HISTORY_WEEKS = 104;
/** Stock on hand the day before the planning calendar starts. */
export const INVENTORY_DATE = '2025-01-05';
export const DEMO_LOAD_ID = 'demo-seed';

/** Demand scale per customer group position (Retail, Online, Wholesale in the demo). */
const GROUP_SCALE = [1, 0.6, 2.2];
/** A partner's sell-through is steady retail demand, never the intermittent kind. */
const STEADY_KINDS = SERIES_KINDS.filter((kind) => kind !== 'intermittent');

export interface SeedDeps {
  clients: Clients;
  sales: SalesDeps;
  inventory: InventoryDeps;
  marks: Collection<Doc>;
  logger: Logger;
}

const listRequest = (page: number, perPage: number): ref.ListRequest => ({
  page: { page, per_page: perPage, total: 0 },
  filter_name: '',
  filter_item_name: '',
  filter_location_name: '',
});

/** Every record of an offset-paginated reference list. */
async function listAll<R>(
  list: (request: ref.ListRequest) => Promise<{ records: R[]; page?: ref.OffsetPage }>,
  perPage: number,
): Promise<R[]> {
  const all: R[] = [];
  for (let page = 1; ; page++) {
    const res = await list(listRequest(page, perPage));
    all.push(...res.records);
    if (res.records.length < perPage || all.length >= (res.page?.total ?? 0)) return all;
  }
}

const chunks = <T>(all: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size));

/** Seeds every demo tenant not seeded yet; returns the tenants seeded now. */
export async function seedDemoTransactional(deps: SeedDeps): Promise<string[]> {
  const seeded: string[] = [];
  for (const tenant of DEMO_TENANTS) {
    if (await deps.marks.findById(tenant)) continue;
    if (!(await seedTenant(deps, tenant))) continue;
    await deps.marks.insertOne({ _id: tenant, completed_at: timestamp() });
    seeded.push(tenant);
  }
  return seeded;
}

async function seedTenant(deps: SeedDeps, tenant: string): Promise<boolean> {
  const call: CallOverrides = { context: { requestId: 'transactional-demo-seed', tenant } };
  const reference = deps.clients.reference;
  const [items, groups, uoms, itemLocations, names] = await Promise.all([
    listAll((request) => reference.listItems(request, call), 1000),
    listAll((request) => reference.listCustomerGroups(request, call), 100),
    listAll((request) => reference.listUoms(request, call), 100),
    listAll((request) => reference.listItemLocations(request, call), 100),
    reference.resolveNames(
      { items: [], customer_groups: [], sale_types: ['History'], timing_intervals: ['week'], uoms: [], locations: [] },
      call,
    ),
  ]);
  const historyId = names.sale_types?.ids[0] ?? 0;
  const weekId = names.timing_intervals?.ids[0] ?? 0;
  if (items.length === 0 || groups.length === 0 || !historyId || !weekId) {
    deps.logger.warn({ tenant }, 'demo sales not seeded: the tenant has no demo reference data');
    return false;
  }
  const uomById = new Map(uoms.map((uom) => [uom.id, uom]));
  // A customer group named after a partner location is the partner's own account: it buys only the items stocked there.
  const partnerItems = new Map<string, Set<number>>();
  for (const placement of itemLocations) {
    if (!placement.partner) continue;
    const key = placement.location_name.toLowerCase();
    partnerItems.set(key, (partnerItems.get(key) ?? new Set()).add(placement.item_id));
  }
  const accountOf = (name: string) => partnerItems.get(name.toLowerCase());
  const sharedGroups = groups.filter((group) => !accountOf(group.name));
  const pairs = items.flatMap((item, i) => sharedGroups.map((group, g) => ({ item, group, i, g, partner: false })));
  const partnerPairs = groups.flatMap((group) =>
    items.flatMap((item, i) => (accountOf(group.name)?.has(item.id) ? [{ item, group, i, g: 0, partner: true }] : [])),
  );
  const allPairs = [...pairs, ...partnerPairs];
  const combinationIds: number[] = [];
  for (const chunk of chunks(allPairs, MAX_BULK)) {
    const keys = chunk.map(({ item, group }) => ({ item_id: item.id, customer_group_id: group.id }));
    combinationIds.push(...(await reference.ensureItemCustomerGroups({ keys }, call)).ids);
  }

  const random = seededRandom(seedOf(tenant));
  // Partners' sell-through draws from its own stream, so the other groups' series stay as they were.
  const partnerRandom = seededRandom(seedOf(`${tenant}:partners`));
  const dates = datesFrom(HISTORY_START, HISTORY_WEEKS);
  const weeklyMean = new Map<number, number>();
  const partnerMean = new Map<string, number>();
  const rows: pb.SalesRow[] = [];
  allPairs.forEach(({ item, group, i, g, partner }, n) => {
    const uom = uomById.get(item.uom_id);
    const decimals = uom?.name === 'Kilogram' ? 1 : 0;
    const draw = partner ? partnerRandom : random;
    const level = partner ? 5 + draw() * 45 : (10 + draw() * 190) * (GROUP_SCALE[g] ?? 1);
    const kind = partner ? STEADY_KINDS[i % STEADY_KINDS.length]! : SERIES_KINDS[(i + g) % SERIES_KINDS.length]!;
    const quantities = demandSeries({ kind, level, decimals }, dates.length, draw);
    const mean = quantities.reduce((a, b) => a + b, 0) / quantities.length;
    if (partner) partnerMean.set(`${group.name.toLowerCase()}:${item.id}`, mean);
    else weeklyMean.set(item.id, (weeklyMean.get(item.id) ?? 0) + mean);
    dates.forEach((sell_date, t) =>
      rows.push({
        item_customer_group_id: combinationIds[n]!,
        item_id: item.id,
        item_name: item.name,
        customer_group_id: group.id,
        customer_group_name: group.name,
        sale_type_id: historyId,
        sale_type_name: 'History',
        timing_interval_id: weekId,
        timing_interval_span: 'week',
        uom_id: item.uom_id,
        uom_name: uom?.name ?? item.uom,
        uom_abbr: uom?.abbreviation ?? item.uom,
        sell_date,
        quantity: quantities[t]!,
      }),
    );
  });
  const apply = { load_id: DEMO_LOAD_ID, refuse_creates: false, refuse_updates: false, dry_run: false };
  for (const chunk of chunks(rows, MAX_BULK)) await applySales(deps.sales, tenant, { ...apply, rows: chunk });

  // Stock on hand: one to six weeks of demand. A partner holds weeks of its own sell-through; the other
  // locations split the item's demand from the shared groups, as planning does.
  const itemById = new Map(items.map((item) => [item.id, item]));
  const sharingOf = new Map<number, number>();
  for (const placement of itemLocations) {
    if (!accountOf(placement.location_name)) sharingOf.set(placement.item_id, (sharingOf.get(placement.item_id) ?? 0) + 1);
  }
  const stock: pb.InventoryRow[] = itemLocations.flatMap((placement) => {
    const item = itemById.get(placement.item_id);
    if (!item) return [];
    const uom = uomById.get(item.uom_id);
    const scale = uom?.name === 'Kilogram' ? 10 : 1;
    const cover = 1 + random() * 5;
    const own = partnerMean.get(`${placement.location_name.toLowerCase()}:${item.id}`);
    const onHand = own !== undefined ? own * cover : ((weeklyMean.get(item.id) ?? 0) * cover) / (sharingOf.get(item.id) ?? 1);
    return [
      {
        item_id: item.id,
        item_name: item.name,
        location_id: placement.location_id,
        location_name: placement.location_name,
        bin_name: '',
        lot_name: '',
        inventory_date: INVENTORY_DATE,
        quantity: Math.round(onHand * scale) / scale,
        uom_id: item.uom_id,
        uom_name: uom?.name ?? item.uom,
        uom_abbr: uom?.abbreviation ?? item.uom,
      },
    ];
  });
  for (const chunk of chunks(stock, MAX_BULK)) await applyInventory(deps.inventory, tenant, { ...apply, rows: chunk });
  return true;
}
