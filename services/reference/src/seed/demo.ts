import { seededRandom, seedOf, type Collection, type Doc, type Store } from '@supply/kit';
import { nameKey, timestamp, type NamedRecord } from '../common/records';
import type { ReferenceDb } from '../db';
import type { LevelKind } from '../hierarchy-levels/repository';
import type { ItemLocationRecord, LotSizingRule } from '../item-locations/repository';
import type { LocationType } from '../locations/repository';
import { resolveNamed } from '../names/service';

export const DEMO_TENANTS = ['demo', 'acme'] as const;
export const DEMO_ITEM_COUNT = 48;

const money = (n: number) => Math.round(n * 100) / 100;

const LEVELS: Array<[LevelKind, string[]]> = [
  ['item', ['Category', 'Brand']],
  ['customer_group', ['Channel', 'Region']],
];
const UOMS = [
  ['Each', 'ea'],
  ['Case', 'cs'],
  ['Kilogram', 'kg'],
] as const;
const CUSTOMER_GROUPS = [
  ['Retail', 'Stores', 'North'],
  ['Online', 'E-commerce', 'National'],
  ['Wholesale', 'Distributors', 'South'],
] as const;
const LOCATIONS: Array<[string, LocationType]> = [
  ['DC-East', 'distribution_center'],
  ['DC-West', 'distribution_center'],
  ['Plant-Central', 'plant'],
  ['Partner-Mart', 'partner'],
];
/** Each partner location's own account: its sales are the partner's sell-through (docs/supply-planning.md). */
const PARTNER_ACCOUNTS = LOCATIONS.filter(([, type]) => type === 'partner').map(([name]) => [name, 'Partners', 'National'] as const);
const CATEGORIES = [
  ['Beverages', 'Sparkling Water', 'Each'],
  ['Snacks', 'Crackers', 'Case'],
  ['Dairy', 'Cheddar', 'Kilogram'],
  ['Household', 'Detergent', 'Each'],
] as const;
const BRANDS = ['Northwind', 'Contoso', 'Fabrikam'];
const LOT_RULES: LotSizingRule[] = ['lot_for_lot', 'fixed_order_quantity', 'economic_order_quantity', 'period_order_quantity'];
/** Items stocked at the partner location (planned in partner mode). */
const PARTNER_ITEMS = 12;

/** Inserts the named records that do not exist yet; existing ones are left as they are. */
async function upsertNamed<R extends NamedRecord>(
  collection: Collection<R>,
  tenant: string,
  rows: Array<Record<string, unknown> & { name: string }>,
) {
  const now = timestamp();
  await collection.bulkUpsert(
    rows.map((row) => ({
      key: { tenant, name_lower: nameKey(row.name) } as Partial<R>,
      set: {},
      setOnInsert: { ...row, created_at: now, updated_at: now } as unknown as Partial<R>,
    })),
  );
}

/**
 * The demo reference data for one tenant (listed in docs/reference.md). Every step inserts only
 * what is missing, so a start interrupted half way completes on the next one; once done, a
 * mark keeps later starts from recreating records a user renamed.
 */
async function seedTenant(db: ReferenceDb, marks: Collection<Doc>, tenant: string): Promise<boolean> {
  if (await marks.findById(tenant)) return false;
  const random = seededRandom(seedOf(tenant));
  const between = (min: number, max: number) => min + random() * (max - min);
  const int = (min: number, max: number) => Math.floor(between(min, max + 1));

  for (const [kind, names] of LEVELS)
    await upsertNamed(
      db.levels,
      tenant,
      names.map((name, i) => ({ name, kind, position: i + 1 })),
    );
  const levelId = new Map((await db.levels.find({ tenant })).map((l) => [l.name, String(l._id)]));
  const hierarchy = (values: Record<string, string>) =>
    Object.fromEntries(Object.entries(values).map(([level, value]) => [levelId.get(level)!, value]));

  await upsertNamed(
    db.uoms,
    tenant,
    UOMS.map(([name, abbreviation]) => ({ name, abbreviation, abbreviation_lower: nameKey(abbreviation) })),
  );
  await upsertNamed(db.saleTypes, tenant, [{ name: 'History' }, { name: 'Forecast' }]);
  await upsertNamed(
    db.timingIntervals,
    tenant,
    ['day', 'week', 'month', 'year'].map((name) => ({ name })),
  );
  await upsertNamed(
    db.customerGroups,
    tenant,
    [...CUSTOMER_GROUPS, ...PARTNER_ACCOUNTS].map(([name, Channel, Region]) => ({ name, hierarchy: hierarchy({ Channel, Region }) })),
  );
  await upsertNamed(
    db.locations,
    tenant,
    LOCATIONS.map(([name, type]) => ({ name, type })),
  );

  const uomId = new Map((await db.uoms.find({ tenant })).map((u) => [u.name, u._id]));
  const items = Array.from({ length: DEMO_ITEM_COUNT }, (_, i) => {
    const [category, noun, uom] = CATEGORIES[i % CATEGORIES.length]!;
    const brand = BRANDS[int(0, BRANDS.length - 1)]!;
    const unit_cost = money(between(1, 40));
    return {
      name: `SKU-${String(i + 1).padStart(4, '0')}`,
      description: `${brand} ${noun} #${i + 1}`,
      uom_id: uomId.get(uom)!,
      unit_cost,
      unit_price: money(unit_cost * between(1.3, 2.2)),
      hierarchy: hierarchy({ Category: category, Brand: brand }),
    };
  });
  await upsertNamed(db.items, tenant, items);

  const itemIds = (
    await resolveNamed(
      db.items,
      tenant,
      items.map((i) => i.name),
    )
  ).ids;
  const locationIds = (
    await resolveNamed(
      db.locations,
      tenant,
      LOCATIONS.map(([name]) => name),
    )
  ).ids;
  const [east, west, , partner] = locationIds;
  const placements = [
    ...itemIds.flatMap((itemId, i) => [
      [i, itemId, east!],
      [i, itemId, west!],
    ]),
    ...itemIds.slice(0, PARTNER_ITEMS).map((itemId, i) => [i, itemId, partner!]),
  ] as Array<[number, number, number]>;
  const now = timestamp();
  await db.itemLocations.bulkUpsert(
    placements.map(([i, item_id, location_id], n) => {
      const lot_sizing_rule = LOT_RULES[n % LOT_RULES.length]!;
      const min_order_qty = random() < 0.5 ? 0 : int(1, 5) * 10;
      const parameters: Omit<ItemLocationRecord, '_id' | 'tenant' | 'item_id' | 'location_id' | 'created_at' | 'updated_at'> = {
        lead_time: int(0, 4),
        safety_stock: int(0, 10) * 5,
        min_order_qty,
        order_multiple: [0, 6, 12][int(0, 2)]!,
        max_order_qty: random() < 0.7 ? 0 : min_order_qty + int(20, 60) * 10,
        lot_sizing_rule,
        fixed_order_qty: lot_sizing_rule === 'fixed_order_quantity' ? int(10, 50) * 10 : 0,
        ordering_cost:
          lot_sizing_rule === 'economic_order_quantity' || lot_sizing_rule === 'period_order_quantity' ? money(between(25, 200)) : 0,
        holding_rate: money(between(0.15, 0.35)),
        unit_cost: items[i]!.unit_cost,
        periods_of_supply: lot_sizing_rule === 'period_order_quantity' && random() < 0.5 ? int(2, 4) : 0,
        partner: location_id === partner,
      };
      return { key: { tenant, item_id, location_id }, set: {}, setOnInsert: { ...parameters, created_at: now, updated_at: now } };
    }),
  );

  await upsertNamed(db.calendars, tenant, [
    { name: 'Weekly', bucket: 'week', week_start: 'monday', start_date: '2025-01-06', periods: 156 },
  ]);
  const calendar = (await db.calendars.findOne({ tenant, name_lower: 'weekly' }))!;
  const itemLocationIds = (await db.itemLocations.find({ tenant }, { sort: [['_id', 1]] })).map((r) => r._id);
  await upsertNamed(db.views, tenant, [
    { name: 'Default', calendar_id: calendar._id, bucket: calendar.bucket, horizon: 52, item_location_ids: itemLocationIds },
  ]);
  await marks.insertOne({ _id: tenant, completed_at: timestamp() });
  return true;
}

/** Seeds every demo tenant that has not been seeded yet; returns the tenants seeded now. */
export async function seedDemoReference(store: Store, db: ReferenceDb): Promise<string[]> {
  const marks = await store.collection<Doc>({ name: 'demo_seeds' });
  const seeded: string[] = [];
  for (const tenant of DEMO_TENANTS) if (await seedTenant(db, marks, tenant)) seeded.push(tenant);
  return seeded;
}
