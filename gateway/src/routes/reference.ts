import { z } from 'zod';
import { AppError, type Clients } from '@supply/kit';
import type { supply_reference_v1 as pb } from '@supply/contracts';
import { defineRoute, emptyMetaSchema, linksSchema, offsetMetaSchema, pathId, q, type Access, type RouteDef } from '../http/routes';
import type { ReferenceCache } from '../http/reference-cache';
import { withReferenceCache } from '../http/reference-cache-routes';
import { inputs, oneOrMany, patches, records } from './reference-schemas';

const PREFIX = '/:tenant/api/v1';
const TAG = 'Reference data';
const READ: Access = { kind: 'token', scope: 'public_api.read', module: 'master_data', level: 'view', cost: 'read' };
const WRITE: Access = { kind: 'token', scope: 'public_api.write', module: 'master_data', level: 'planner', cost: 'write' };

/**
 * `page`/`per_page` with the endpoint's own maximum (out of range: 422) and `filter[...]`
 * (unknown names: 400 invalid-query). Reference reads take no `sort` or `include`.
 */
export const offsetQuery = (maxPerPage: number) =>
  z.object({
    page: q.int(1, 1_000_000).default(1),
    per_page: q.int(1, maxPerPage).default(25),
    filter: z.record(z.string(), z.string().max(255)).optional(),
    sort: z.unknown().optional(),
    include: z.unknown().optional(),
  });
type OffsetQuery = z.infer<ReturnType<typeof offsetQuery>>;

/** `meta.pagination` of offset reads; a page past the end is empty with the same totals. */
export function offsetPagination(page: number, perPage: number, total: number, resultCount: number) {
  return {
    pagination: {
      result_count: resultCount,
      per_page: perPage,
      current_page: page,
      total,
      last_page: Math.max(1, Math.ceil(total / perPage)),
    },
  };
}

const FILTERS = {
  name: 'filter_name',
  item_name: 'filter_item_name',
  location_name: 'filter_location_name',
} as const;
type FilterName = keyof typeof FILTERS;

/** The list request for the service; unknown filter names, `sort` or `include` are a 400. */
function listRequest(query: OffsetQuery, allowed: readonly FilterName[]): pb.ListRequest {
  for (const param of ['sort', 'include'] as const) {
    if (query[param] !== undefined)
      throw new AppError('invalid_query', `This endpoint does not support ${param}; records come in id order.`);
  }
  const request: pb.ListRequest = {
    page: { page: query.page, per_page: query.per_page, total: 0 },
    filter_name: '',
    filter_item_name: '',
    filter_location_name: '',
  };
  for (const [name, value] of Object.entries(query.filter ?? {})) {
    if (!(allowed as readonly string[]).includes(name)) {
      throw new AppError(
        'invalid_query',
        `Unknown filter ${name}; this endpoint filters on ${allowed.map((f) => `filter[${f}]`).join(', ')}.`,
      );
    }
    request[FILTERS[name as FilterName]] = value;
  }
  return request;
}

interface Writes<I extends z.ZodObject, P extends z.ZodObject, In, Rec> {
  input: I;
  patch: P;
  /** The validated JSON record as the service's input message. */
  toInput(value: z.output<I> | z.output<P>): In;
  create(records: In[], arrayBody: boolean): Promise<{ records: Rec[] }>;
  update(id: number, patch: In): Promise<Rec>;
}

interface Resource<Rec, In> {
  /** Path segment, e.g. `item-locations`. */
  path: string;
  /** Plural words for summaries, e.g. `item-locations`. */
  plural: string;
  maxPerPage: number;
  filters: readonly FilterName[];
  record: z.ZodType;
  list(request: pb.ListRequest): Promise<{ records: Rec[]; page?: pb.OffsetPage }>;
  get(id: number): Promise<Rec>;
  writes?: Writes<z.ZodObject, z.ZodObject, In, Rec>;
}

/** GET list, GET by id and, for writable resources, POST (one or many) and PATCH. */
function resourceRoutes<Rec, In>(r: Resource<Rec, In>): RouteDef[] {
  const list = `${PREFIX}/${r.path}`;
  const one = `${list}/:id`;
  const single = z.object({ data: z.array(r.record), meta: emptyMetaSchema, links: linksSchema });
  const routes: RouteDef[] = [
    defineRoute({
      method: 'get',
      path: list,
      summary: `List ${r.plural} (offset pagination, id order, per_page up to ${r.maxPerPage})`,
      tag: TAG,
      access: READ,
      dialect: 'current',
      query: offsetQuery(r.maxPerPage),
      response: z.object({ data: z.array(r.record), meta: offsetMetaSchema, links: linksSchema }),
      async handler({ query }) {
        const res = await r.list(listRequest(query, r.filters));
        return {
          kind: 'envelope',
          data: res.records,
          meta: offsetPagination(query.page, query.per_page, res.page?.total ?? 0, res.records.length),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: one,
      summary: `One of the ${r.plural} by id (404 for an unknown id or another tenant's)`,
      tag: TAG,
      access: READ,
      dialect: 'current',
      response: single,
      async handler({ params }) {
        return { kind: 'envelope', data: [await r.get(pathId(params.id))] };
      },
    }),
  ];
  const w = r.writes;
  if (!w) return routes;
  routes.push(
    defineRoute({
      method: 'post',
      path: list,
      summary: `Create ${r.plural}: one object or an array of up to 1000, all or nothing`,
      tag: TAG,
      access: WRITE,
      dialect: 'current',
      body: oneOrMany(w.input),
      response: single,
      successStatus: 201,
      idempotency: 'gateway',
      async handler({ body }) {
        const created = await w.create(body.records.map(w.toInput), body.arrayBody);
        return { kind: 'envelope', data: created.records };
      },
    }),
    defineRoute({
      method: 'patch',
      path: one,
      summary: `Update one of the ${r.plural}: only the fields sent change`,
      tag: TAG,
      access: WRITE,
      dialect: 'current',
      body: w.patch,
      response: single,
      async handler({ params, body }) {
        return { kind: 'envelope', data: [await w.update(pathId(params.id), w.toInput(body))] };
      },
    }),
  );
  return routes;
}

/** Typed so each resource's `toInput` sees its own schemas' output. */
function writes<I extends z.ZodObject, P extends z.ZodObject, In, Rec>(
  w: Writes<I, P, In, Rec>,
): Writes<z.ZodObject, z.ZodObject, In, Rec> {
  return w as unknown as Writes<z.ZodObject, z.ZodObject, In, Rec>;
}

/** `{Level: value | null}` as the service's message; null clears the level. */
const hierarchyInput = (values: Record<string, string | null> | undefined): pb.HierarchyValues | undefined =>
  values && { values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v ?? ''])) };

/** Reference routes; with `cache`, reads are answered from it and writes drop the tenant's answers (http/reference-cache-routes.ts). */
export function referenceRoutes(clients: Clients, cache?: ReferenceCache): RouteDef[] {
  // Reads carry an ETag and answer a current If-None-Match with 304 (the cache's answers; documented either way).
  const routes = uncachedReferenceRoutes(clients).map((route) =>
    route.method === 'get' ? { ...route, alsoAnswers: [...(route.alsoAnswers ?? []), 304] } : route,
  );
  return cache ? routes.map((route) => withReferenceCache(route, cache)) : routes;
}

function uncachedReferenceRoutes(clients: Clients): RouteDef[] {
  const ref = clients.reference;
  return [
    ...resourceRoutes({
      path: 'uoms',
      plural: 'units of measure',
      maxPerPage: 100,
      filters: ['name'],
      record: records.uom,
      list: (req) => ref.listUoms(req),
      get: (id) => ref.getUom({ id }),
      writes: writes({
        input: inputs.uom,
        patch: patches.uom,
        toInput: (v): pb.UomInput => v,
        create: (records, array_body) => ref.createUoms({ records, array_body }),
        update: (id, patch) => ref.updateUom({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'items',
      plural: 'items',
      maxPerPage: 1000,
      filters: ['name'],
      record: records.item,
      list: (req) => ref.listItems(req),
      get: (id) => ref.getItem({ id }),
      writes: writes({
        input: inputs.item,
        patch: patches.item,
        toInput: ({ hierarchy, description, ...rest }): pb.ItemInput => ({
          ...rest,
          description: description === null ? '' : description,
          hierarchy: hierarchyInput(hierarchy),
        }),
        create: (records, array_body) => ref.createItems({ records, array_body }),
        update: (id, patch) => ref.updateItem({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'customer-groups',
      plural: 'customer groups',
      maxPerPage: 100,
      filters: ['name'],
      record: records.customerGroup,
      list: (req) => ref.listCustomerGroups(req),
      get: (id) => ref.getCustomerGroup({ id }),
      writes: writes({
        input: inputs.customerGroup,
        patch: patches.customerGroup,
        toInput: ({ hierarchy, ...rest }): pb.CustomerGroupInput => ({ ...rest, hierarchy: hierarchyInput(hierarchy) }),
        create: (records, array_body) => ref.createCustomerGroups({ records, array_body }),
        update: (id, patch) => ref.updateCustomerGroup({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'sale-types',
      plural: 'sale types',
      maxPerPage: 100,
      filters: ['name'],
      record: records.saleType,
      list: (req) => ref.listSaleTypes(req),
      get: (id) => ref.getSaleType({ id }),
    }),
    ...resourceRoutes({
      path: 'timing-intervals',
      plural: 'timing intervals',
      maxPerPage: 100,
      filters: ['name'],
      record: records.timingInterval,
      list: (req) => ref.listTimingIntervals(req),
      get: (id) => ref.getTimingInterval({ id }),
    }),
    ...resourceRoutes({
      path: 'calendars',
      plural: 'calendars',
      maxPerPage: 100,
      filters: ['name'],
      record: records.calendar,
      list: (req) => ref.listCalendars(req),
      get: (id) => ref.getCalendar({ id }),
      writes: writes({
        input: inputs.calendar,
        patch: patches.calendar,
        toInput: (v): pb.CalendarInput => v,
        create: (records, array_body) => ref.createCalendars({ records, array_body }),
        update: (id, patch) => ref.updateCalendar({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'locations',
      plural: 'locations',
      maxPerPage: 1000,
      filters: ['name'],
      record: records.location,
      list: (req) => ref.listLocations(req),
      get: (id) => ref.getLocation({ id }),
      writes: writes({
        input: inputs.location,
        patch: patches.location,
        toInput: (v): pb.LocationInput => v,
        create: (records, array_body) => ref.createLocations({ records, array_body }),
        update: (id, patch) => ref.updateLocation({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'item-locations',
      plural: 'item-locations',
      maxPerPage: 100,
      filters: ['item_name', 'location_name'],
      record: records.itemLocation,
      list: (req) => ref.listItemLocations(req),
      get: (id) => ref.getItemLocation({ id }),
      writes: writes({
        input: inputs.itemLocation,
        patch: patches.itemLocation,
        toInput: (v): pb.ItemLocationInput => v,
        create: (records, array_body) => ref.createItemLocations({ records, array_body }),
        update: (id, patch) => ref.updateItemLocation({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'views',
      plural: 'views',
      maxPerPage: 100,
      filters: ['name'],
      record: records.view,
      list: (req) => ref.listViews(req),
      get: async (id) => (await ref.getView({ id, name: '' })).view!,
      writes: writes({
        input: inputs.view,
        patch: patches.view,
        toInput: ({ item_location_ids, ...rest }): pb.ViewInput => ({
          ...rest,
          item_location_ids: item_location_ids && { ids: item_location_ids },
        }),
        create: (records, array_body) => ref.createViews({ records, array_body }),
        update: (id, patch) => ref.updateView({ id, patch }),
      }),
    }),
    ...resourceRoutes({
      path: 'hierarchy-levels',
      plural: 'hierarchy levels',
      maxPerPage: 100,
      filters: ['name'],
      record: records.hierarchyLevel,
      list: (req) => ref.listHierarchyLevels(req),
      get: (id) => ref.getHierarchyLevel({ id }),
      writes: writes({
        input: inputs.hierarchyLevel,
        patch: patches.hierarchyLevel,
        toInput: (v): pb.HierarchyLevelInput => v,
        create: (records, array_body) => ref.createHierarchyLevels({ records, array_body }),
        update: (id, patch) => ref.updateHierarchyLevel({ id, patch }),
      }),
    }),
  ];
}
