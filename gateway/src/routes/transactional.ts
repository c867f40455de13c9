import { z } from 'zod';
import { AppError, ValidationError, type Clients } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { cursorBinding, type CursorCodec } from '../http/cursor';
import { cursorMetaSchema, defineRoute, linksSchema, q, type PermissionModule, type RouteDef } from '../http/routes';
import { fieldErrorsFromZod } from '../http/validation';

const PREFIX = '/:tenant/api/v1';
const TAG = 'Transactional data';
/** Cursor reads: per_page default and maximum, the same on every transactional read. */
const PER_PAGE_DEFAULT = 100;
const PER_PAGE_MAX = 5000;
/** Values one comma list filter takes. */
const MAX_LIST = 100;

const invalidQuery = (detail: string) => new AppError('invalid_query', detail, { problem: 'invalid-query' });

/** `a,b,c` -> distinct trimmed names, each a name as reference data allows. */
const nameList = z
  .string()
  .max(MAX_LIST * 256)
  .transform((value) => [
    ...new Set(
      value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ])
  .pipe(z.array(z.string().max(255, 'The filter values must not be greater than 255 characters.')).max(MAX_LIST));
const date = z.iso.date();

type FilterSchemas = Record<string, typeof nameList | typeof date>;

/** What one cursor list accepts, and how it reaches its service. */
interface CursorList<F extends FilterSchemas, Res extends { page?: pb.PageInfo }> {
  /** Path segment after `/api/v1/`, also part of every cursor's binding. */
  path: string;
  summary: string;
  module: PermissionModule;
  filters: F;
  /** Sort names besides `id`. */
  sorts: readonly string[];
  includes: readonly string[];
  record: z.ZodType;
  fetch(input: { filter: { [K in keyof F]?: z.output<F[K]> }; page: pb.PageRequest; include: ReadonlySet<string> }): Promise<Res>;
  present(response: Res, include: ReadonlySet<string>): unknown[];
}

/** A comma list parameter: names only from `allowed` (else 400 invalid-query), a string (else 422). */
function commaNames(param: 'sort' | 'include', raw: unknown, allowed: readonly string[], strip = (name: string) => name): string[] {
  if (raw === undefined) return [];
  if (typeof raw !== 'string') throw new ValidationError({ [param]: [`The ${param} field must be a string.`] });
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!allowed.includes(strip(name))) {
      const list = allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'this endpoint takes none';
      throw invalidQuery(`Unknown ${param} ${JSON.stringify(strip(name))}; ${list}.`);
    }
  }
  return names;
}

/**
 * GET `/{tenant}/api/v1/<path>` with cursor pagination: `cursor`, `per_page`, `filter[...]`,
 * `sort` (comma list, `-` descending, ties on id) and `include`. Cursors are signed and bound
 * to the tenant, the endpoint, the filters and the sort.
 */
function cursorListRoute<F extends FilterSchemas, Res extends { page?: pb.PageInfo }>(
  cursors: CursorCodec,
  list: CursorList<F, Res>,
): RouteDef {
  const sortNames = ['id', ...list.sorts];
  const filterNames = Object.keys(list.filters);
  const filterSchema = z.strictObject(Object.fromEntries(filterNames.map((name) => [name, list.filters[name]!.optional()])));
  // filter, sort and include stay untyped here: their names are checked first (400), then their values (422).
  const query = z.object({
    cursor: z.string().max(4096).optional().describe('next_cursor or prev_cursor of a previous page; omitted on the first request'),
    per_page: q.int(1, PER_PAGE_MAX).default(PER_PAGE_DEFAULT),
    filter: z
      .unknown()
      .optional()
      .describe(`filter[name]=value; names: ${filterNames.join(', ')}; name filters take comma lists`)
      .meta({
        type: 'object',
        properties: Object.fromEntries(filterNames.map((name) => [name, { type: 'string' }])),
        additionalProperties: false,
      }),
    sort: z
      .unknown()
      .optional()
      .describe(`comma list of ${sortNames.join(', ')}; a leading - sorts descending; ties break on id`),
    include: z
      .unknown()
      .optional()
      .describe(list.includes.length > 0 ? `comma list of ${list.includes.join(', ')}` : 'none'),
  });
  return defineRoute({
    method: 'get',
    path: `${PREFIX}/${list.path}`,
    summary: list.summary,
    tag: TAG,
    access: { kind: 'token', scope: 'public_api.read', module: list.module, level: 'view', cost: 'read' },
    dialect: 'current',
    query,
    response: z.object({
      data: z.array(list.record),
      meta: cursorMetaSchema,
      links: linksSchema,
    }),
    async handler({ query: input, params }) {
      // Names first (400), then values (422): an unknown name is never a validation error.
      const rawFilter = input.filter ?? {};
      if (typeof rawFilter !== 'object' || rawFilter === null || Array.isArray(rawFilter)) {
        throw invalidQuery(`Filters are written filter[name]=value; names: ${filterNames.join(', ')}.`);
      }
      for (const name of Object.keys(rawFilter)) {
        if (!filterNames.includes(name))
          throw invalidQuery(`Unknown filter ${JSON.stringify(name)}; allowed: ${filterNames.map((f) => `filter[${f}]`).join(', ')}.`);
      }
      const sort = commaNames('sort', input.sort, sortNames, (name) => name.replace(/^-/, ''));
      const include = new Set(commaNames('include', input.include, list.includes));
      // `filter[x][$ne]=y` arrives as an object: a value, never an operator, reaches the service.
      const notStrings = Object.entries(rawFilter).filter(([, value]) => typeof value !== 'string');
      if (notStrings.length > 0) {
        throw new ValidationError(
          Object.fromEntries(notStrings.map(([name]) => [`filter.${name}`, [`The filter.${name} field must be a string.`]])),
        );
      }
      const parsed = filterSchema.safeParse(rawFilter, { reportInput: true });
      if (!parsed.success) throw new ValidationError(fieldErrorsFromZod(parsed.error, ['filter']));
      const filter = parsed.data as { [K in keyof F]?: z.output<F[K]> };

      const binding = cursorBinding({
        resource: list.path,
        tenant: params.tenant,
        filter: Object.fromEntries(
          Object.entries(filter)
            .filter(([, value]) => value !== undefined)
            .map(([name, value]) => [name, Array.isArray(value) ? [...new Set(value.map((v) => v.toLowerCase()))].sort() : value]),
        ),
        sort,
      });
      const cursor = input.cursor ? cursors.decode(binding, input.cursor) : undefined;
      const response = await list.fetch({
        filter,
        include,
        page: {
          per_page: input.per_page,
          sort: sort.map((name) => ({ field: name.replace(/^-/, ''), descending: name.startsWith('-') })),
          after: cursor?.position ?? '',
          backward: cursor?.direction === 'prev',
        },
      });
      const data = list.present(response, include);
      const page = response.page!;
      const backward = cursor?.direction === 'prev';
      // Walking back, the page we came from lies ahead; walking on, a cursor means pages lie behind.
      const hasMore = backward ? data.length > 0 : page.has_more;
      const hasBefore = backward ? page.has_more : cursor !== undefined && data.length > 0;
      return {
        kind: 'envelope',
        data,
        meta: {
          pagination: {
            result_count: data.length,
            per_page: input.per_page,
            has_more: hasMore,
            next_cursor: hasMore ? cursors.encode(binding, 'next', page.last_position) : null,
            prev_cursor: hasBefore ? cursors.encode(binding, 'prev', page.first_position) : null,
          },
        },
      };
    },
  });
}

// ---------------------------------------------------------------- records as clients see them

const timestamps = { created_at: z.string(), updated_at: z.string() };

const salesRecord = z
  .object({
    id: z.number().int(),
    item_customer_group_id: z.number().int(),
    item_id: z.number().int(),
    item_name: z.string(),
    customer_group_id: z.number().int(),
    customer_group_name: z.string(),
    sale_type_name: z.string(),
    timing_interval: z.string(),
    sell_date: z.string(),
    quantity: z.number(),
    uom: z.string(),
    uom_abbr: z.string(),
    ...timestamps,
    item: z.object({ id: z.number().int(), name: z.string() }).optional(),
    customer_group: z.object({ id: z.number().int(), name: z.string() }).optional(),
    hierarchy: z
      .object({ item: z.record(z.string(), z.string()), customer_group: z.record(z.string(), z.string()) })
      .optional()
      .describe('with include=hierarchy: level name -> value, set levels only'),
  })
  .meta({ id: 'Sale' });

/** Level name -> value for the levels that have one (as the items resource shows hierarchy). */
const levelValues = (levels: readonly string[], values: readonly string[]) =>
  Object.fromEntries(levels.map((level, i) => [level, values[i] ?? '']).filter(([, value]) => value !== ''));

export function presentSale(
  record: pb.SalesRecord,
  include: ReadonlySet<string>,
  levels: { item_levels: string[]; customer_group_levels: string[] },
) {
  return {
    id: record.id,
    item_customer_group_id: record.item_customer_group_id,
    item_id: record.item_id,
    item_name: record.item_name,
    customer_group_id: record.customer_group_id,
    customer_group_name: record.customer_group_name,
    sale_type_name: record.sale_type_name,
    timing_interval: record.timing_interval_span,
    sell_date: record.sell_date,
    quantity: record.quantity,
    uom: record.uom_name,
    uom_abbr: record.uom_abbr,
    created_at: record.created_at,
    updated_at: record.updated_at,
    ...(include.has('item') ? { item: { id: record.item_id, name: record.item_name } } : {}),
    ...(include.has('customer_group') ? { customer_group: { id: record.customer_group_id, name: record.customer_group_name } } : {}),
    ...(include.has('hierarchy')
      ? {
          hierarchy: {
            item: levelValues(levels.item_levels, record.item_hierarchy),
            customer_group: levelValues(levels.customer_group_levels, record.customer_group_hierarchy),
          },
        }
      : {}),
  };
}

const inventoryRecord = z
  .object({
    id: z.number().int(),
    item_id: z.number().int(),
    item_name: z.string(),
    location_id: z.number().int(),
    location_name: z.string(),
    bin_name: z.string().nullable(),
    lot_name: z.string().nullable(),
    inventory_date: z.string(),
    quantity: z.number(),
    uom: z.string(),
    uom_abbr: z.string(),
    ...timestamps,
  })
  .meta({ id: 'InventoryRecord' });

const presentInventory = (record: pb.InventoryRecord) => ({
  id: record.id,
  item_id: record.item_id,
  item_name: record.item_name,
  location_id: record.location_id,
  location_name: record.location_name,
  bin_name: record.bin_name || null,
  lot_name: record.lot_name || null,
  inventory_date: record.inventory_date,
  quantity: record.quantity,
  uom: record.uom_name,
  uom_abbr: record.uom_abbr,
  created_at: record.created_at,
  updated_at: record.updated_at,
});

const planIds = {
  id: z.number().int(),
  plan_run_id: z.number().int(),
  view_id: z.number().int(),
  view_name: z.string(),
  item_location_id: z.number().int(),
  item_id: z.number().int(),
  item_name: z.string(),
  location_id: z.number().int(),
  location_name: z.string(),
  period_start: z.string(),
};
const numbers = <K extends string>(names: readonly K[]) =>
  Object.fromEntries(names.map((name) => [name, z.number()])) as Record<K, z.ZodNumber>;
const SUPPLY_FIELDS = [
  'gross_requirements',
  'scheduled_receipts',
  'projected_available',
  'net_requirements',
  'planned_receipts',
  'planned_releases',
] as const;
const FINANCIAL_FIELDS = ['satisfied_demand', 'revenue', 'cost_of_goods', 'gross_margin', 'purchase_spend', 'inventory_value'] as const;
const supplyPlanRecord = z.object({ ...planIds, ...numbers(SUPPLY_FIELDS), ...timestamps }).meta({ id: 'SupplyPlanRow' });
const financialPlanRecord = z.object({ ...planIds, ...numbers(FINANCIAL_FIELDS), ...timestamps }).meta({ id: 'FinancialPlanRow' });

/** A plan row flat: its item-location and view, then the bucket's figures. */
export function presentPlanRow(record: pb.SupplyPlanRecord | pb.FinancialPlanRecord) {
  const { bucket, created_at, updated_at, ...ids } = record;
  return { ...ids, ...bucket, created_at, updated_at };
}

// ---------------------------------------------------------------- the four reads

export function transactionalRoutes(clients: Clients, cursors: CursorCodec): RouteDef[] {
  const planFilters = { item_name: nameList, location_name: nameList, view_name: nameList, period_start_from: date, period_start_to: date };
  const planFilter = (filter: { [K in keyof typeof planFilters]?: z.output<(typeof planFilters)[K]> }): pb.PlanFilter => ({
    item_names: filter.item_name ?? [],
    location_names: filter.location_name ?? [],
    view_names: filter.view_name ?? [],
    period_start_from: filter.period_start_from ?? '',
    period_start_to: filter.period_start_to ?? '',
  });
  return [
    cursorListRoute(cursors, {
      path: 'sales-data',
      summary: 'Sales and forecasts (cursor pagination, filter/sort/include)',
      module: 'demand',
      filters: {
        item_name: nameList,
        customer_group_name: nameList,
        sale_type_name: nameList,
        timing_interval: nameList,
        sell_date_from: date,
        sell_date_to: date,
      },
      sorts: ['sell_date', 'item_name', 'customer_group_name', 'quantity', 'created_at', 'updated_at'],
      includes: ['item', 'customer_group', 'hierarchy'],
      record: salesRecord,
      fetch: ({ filter, page, include }) =>
        clients.transactional.querySales({
          filter: {
            item_names: filter.item_name ?? [],
            customer_group_names: filter.customer_group_name ?? [],
            sale_type_names: filter.sale_type_name ?? [],
            timing_intervals: filter.timing_interval ?? [],
            sell_date_from: filter.sell_date_from ?? '',
            sell_date_to: filter.sell_date_to ?? '',
            item_customer_group_ids: [],
          },
          page,
          include_hierarchy: include.has('hierarchy'),
        }),
      present: (response, include) => response.records.map((record) => presentSale(record, include, response)),
    }),
    cursorListRoute(cursors, {
      path: 'inventory',
      summary: 'Inventory on hand by item, location, bin, lot and date (cursor pagination)',
      module: 'inventory',
      filters: { item_name: nameList, location_name: nameList, inventory_date_from: date, inventory_date_to: date },
      sorts: ['inventory_date', 'item_name', 'location_name', 'quantity', 'created_at', 'updated_at'],
      includes: [],
      record: inventoryRecord,
      fetch: ({ filter, page }) =>
        clients.transactional.queryInventory({
          filter: {
            item_names: filter.item_name ?? [],
            location_names: filter.location_name ?? [],
            inventory_date_from: filter.inventory_date_from ?? '',
            inventory_date_to: filter.inventory_date_to ?? '',
          },
          page,
        }),
      present: (response) => response.records.map(presentInventory),
    }),
    cursorListRoute(cursors, {
      path: 'supply-plans',
      summary: 'Supply plan rows: one MRP bucket per item-location, view and period (cursor pagination)',
      module: 'supply',
      filters: planFilters,
      sorts: ['period_start', 'item_name', 'location_name'],
      includes: [],
      record: supplyPlanRecord,
      fetch: ({ filter, page }) => clients.transactional.querySupplyPlans({ filter: planFilter(filter), page }),
      present: (response) => response.records.map(presentPlanRow),
    }),
    cursorListRoute(cursors, {
      path: 'financial-plans',
      summary: 'Financial plan rows: revenue, costs and inventory value per item-location, view and period (cursor pagination)',
      module: 'finance',
      filters: planFilters,
      sorts: ['period_start', 'item_name', 'location_name'],
      includes: [],
      record: financialPlanRecord,
      fetch: ({ filter, page }) => clients.transactional.queryFinancialPlans({ filter: planFilter(filter), page }),
      present: (response) => response.records.map(presentPlanRow),
    }),
  ];
}
