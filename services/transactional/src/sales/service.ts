import { ValidationError, type Clients, type Collection } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { applyRows, deleteOutsideLoad } from '../common/apply';
import { keysetPage, type KeysetQuery } from '../common/keyset';
import { conditionsOf, readPage } from '../common/pages';
import { addDays, checkBatch, FieldCheck, MAX_BULK, MAX_PER_PAGE, nameKey } from '../common/records';
import { attachHierarchy } from './hierarchy';
import { SALES_APPLY, SALES_PAGES, toSalesRecord, type SalesRecordDoc } from './repository';

export interface SalesDeps {
  sales: Collection<SalesRecordDoc>;
  clients: Clients;
  /** The timestamp writes carry. */
  now(): string;
}

const NO_LEVELS = { item_levels: [], customer_group_levels: [] };

/** The filter as store conditions; every list is "any of", names ignore case. */
function salesConditions(tenant: string, filter: pb.SalesFilter | undefined): Pick<KeysetQuery, 'equals' | 'ranges'> {
  const conditions = conditionsOf(
    tenant,
    {
      item_name_lower: filter?.item_names,
      customer_group_name_lower: filter?.customer_group_names,
      sale_type_name_lower: filter?.sale_type_names,
      timing_interval_span_lower: filter?.timing_intervals,
    },
    { field: 'sell_date', from: filter?.sell_date_from ?? '', to: filter?.sell_date_to ?? '', names: ['sell_date_from', 'sell_date_to'] },
  );
  if (filter?.item_customer_group_ids.length) conditions.equals['item_customer_group_id'] = [...new Set(filter.item_customer_group_ids)];
  return conditions;
}

export async function querySales(deps: SalesDeps, tenant: string, request: pb.QuerySalesRequest): Promise<pb.QuerySalesResponse> {
  const { records, page } = await readPage(deps.sales, SALES_PAGES, salesConditions(tenant, request.filter), request.page);
  const out = records.map(toSalesRecord);
  const levels = request.include_hierarchy ? await attachHierarchy(deps.clients, out) : NO_LEVELS;
  return { records: out, page, ...levels };
}

/** Every matching record in id order after `after_id`, for internal readers. */
export async function listSales(deps: SalesDeps, tenant: string, request: pb.ListSalesRequest): Promise<pb.ListSalesResponse> {
  const limit = request.limit || 1000;
  if (limit < 1 || limit > MAX_BULK) throw new ValidationError({ limit: [`The limit field must be between 1 and ${MAX_BULK}.`] });
  const { records, hasMore } = await keysetPage(deps.sales, {
    ...salesConditions(tenant, request.filter),
    sort: [{ field: '_id', direction: 1 }],
    limit,
    after: request.after_id > 0 ? [request.after_id] : undefined,
    fanOut: SALES_PAGES.fanOut,
  });
  return { records: records.map(toSalesRecord), has_more: hasMore };
}

/**
 * The legacy read: the records of one sale type with sell_date in [start_date, start_date +
 * duration_days), by id after `after_id`, with the window's counts for the legacy wrapper.
 */
export async function listLegacySales(
  deps: SalesDeps,
  tenant: string,
  request: pb.ListLegacySalesRequest,
): Promise<pb.ListLegacySalesResponse> {
  const check = new FieldCheck();
  check.name('sale_type_name', request.sale_type_name);
  check.date('start_date', request.start_date);
  if (!Number.isSafeInteger(request.duration_days) || request.duration_days < 1)
    check.add('duration', 'The duration field must be at least 1.');
  if (!Number.isSafeInteger(request.limit) || request.limit < 1 || request.limit > MAX_PER_PAGE) {
    check.add('pagination_count', `The pagination count field must be between 1 and ${MAX_PER_PAGE}.`);
  }
  if (!Number.isSafeInteger(request.after_id) || request.after_id < 0)
    check.add('current_index', 'The current index field must be at least 0.');
  check.done();
  const resolved = await deps.clients.reference.resolveNames({
    items: [],
    customer_groups: [],
    sale_types: [request.sale_type_name],
    timing_intervals: [],
    uoms: [],
    locations: [],
  });
  if (!resolved.sale_types?.ids[0]) throw new ValidationError({ sale_type_name: ['The selected sale type name is invalid.'] });

  const saleType = nameKey(request.sale_type_name);
  const end = addDays(request.start_date, request.duration_days);
  const window = { tenant, sale_type_name_lower: saleType, sell_date: { $gte: request.start_date, $lt: end } };
  const [page, total, previous] = await Promise.all([
    keysetPage(deps.sales, {
      equals: { tenant: [tenant], sale_type_name_lower: [saleType] },
      ranges: { sell_date: { from: request.start_date, before: end } },
      sort: [{ field: '_id', direction: 1 }],
      limit: request.limit,
      after: request.after_id > 0 ? [request.after_id] : undefined,
    }),
    deps.sales.count(window),
    request.after_id > 0 ? deps.sales.count({ ...window, _id: { $lte: request.after_id } }) : 0,
  ]);
  const records = page.records.map(toSalesRecord);
  const levels = request.include_hierarchy ? await attachHierarchy(deps.clients, records) : NO_LEVELS;
  return { records, total, previous_count: previous, has_more: page.hasMore, ...levels };
}

function checkSalesRows(rows: readonly pb.SalesRow[]): void {
  checkBatch('rows', rows.length);
  const check = new FieldCheck();
  rows.forEach((row, i) => {
    const at = (field: string) => `rows.${i}.${field}`;
    for (const field of [
      'item_customer_group_id',
      'item_id',
      'customer_group_id',
      'sale_type_id',
      'timing_interval_id',
      'uom_id',
    ] as const) {
      check.id(at(field), row[field]);
    }
    for (const field of ['item_name', 'customer_group_name', 'sale_type_name', 'timing_interval_span', 'uom_name', 'uom_abbr'] as const) {
      check.name(at(field), row[field]);
    }
    check.date(at('sell_date'), row.sell_date);
    check.number(at('quantity'), row.quantity, 0);
  });
  check.done();
}

export async function applySales(deps: SalesDeps, tenant: string, request: pb.ApplySalesRequest): Promise<pb.ApplyResult> {
  checkSalesRows(request.rows);
  return applyRows(deps.sales, SALES_APPLY, request.rows, {
    tenant,
    loadId: request.load_id,
    refuseCreates: request.refuse_creates,
    refuseUpdates: request.refuse_updates,
    dryRun: request.dry_run,
    now: deps.now(),
    applyId: request.apply_id,
  });
}

export async function deleteSalesOutsideLoad(
  deps: SalesDeps,
  tenant: string,
  request: pb.DeleteSalesOutsideLoadRequest,
): Promise<pb.DeleteResult> {
  if (request.sale_type_ids.length === 0 && request.customer_group_ids.length === 0) {
    throw new ValidationError({ scope: ['A replace needs a scope: sale_type_ids or customer_group_ids.'] });
  }
  const scope = {
    tenant,
    ...(request.sale_type_ids.length > 0 ? { sale_type_id: { $in: request.sale_type_ids } } : {}),
    ...(request.customer_group_ids.length > 0 ? { customer_group_id: { $in: request.customer_group_ids } } : {}),
  };
  return { deleted: await deleteOutsideLoad(deps.sales, scope, request.load_id, request.dry_run) };
}
