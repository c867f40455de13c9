import { z } from 'zod';
import type { Clients } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { defineRoute, q, type RouteDef } from '../../http/routes';

/** Records per batch unless `pagination_count` says otherwise (at most MAX_BATCH). */
const DEFAULT_BATCH = 1000;
const MAX_BATCH = 5000;

const flag = z.enum(['0', '1', 'true', 'false']).transform((value) => value === '1' || value === 'true');

const legacySalesQuery = z.object({
  sale_type_name: z.string().trim().min(1).max(255),
  start_date: z.iso.date(),
  duration: q.int(1, 36_600),
  include_flattened_hierarchy: flag.optional(),
  current_index: q.int(0).optional(),
  pagination_count: q.int(1, MAX_BATCH).default(DEFAULT_BATCH),
});

/** A sales record as the legacy API shows it, fields in the order legacy clients know. */
function legacySale(record: pb.SalesRecord, flattened: { item_levels: string[]; customer_group_levels: string[] } | undefined) {
  const out: Record<string, unknown> = {
    id: record.id,
    sell_date: record.sell_date,
    quantity: record.quantity,
    created_at: record.created_at,
    updated_at: record.updated_at,
    item_name: record.item_name,
    customer_group_name: record.customer_group_name,
    timing_interval_span: record.timing_interval_span,
    sale_type_name: record.sale_type_name,
    uom_abbr: record.uom_abbr,
  };
  if (!flattened) return out;
  out.uom = record.uom_name;
  // One string per level, named as the tenant named the level; "" where the record's item or group has no value.
  flattened.item_levels.forEach((level, i) => (out[level] = record.item_hierarchy[i] ?? ''));
  flattened.customer_group_levels.forEach((level, i) => (out[level] = record.customer_group_hierarchy[i] ?? ''));
  return out;
}

/**
 * The legacy list wrapper. The batch holds the records after `current_index` (an id);
 * `previous_data_count + success_count + data_count_remaining == total` on every batch.
 */
function legacyWrapper(response: pb.ListLegacySalesResponse, currentIndex: number, perPage: number, sales: unknown[]) {
  const previous = response.previous_count;
  const count = sales.length;
  const to = previous + count;
  const last = response.records[count - 1];
  return {
    success_message:
      count > 0
        ? `Sales data retrieved successfully: records ${previous + 1} to ${to} of ${response.total}.`
        : `No sales data to retrieve: ${response.total} records in all.`,
    sales,
    total: response.total,
    from: count > 0 ? previous + 1 : 0,
    to: count > 0 ? to : 0,
    per_page: perPage,
    previous_data_count: previous,
    data_count_remaining: response.total - previous - count,
    current_index: currentIndex,
    next_index: response.has_more && last ? last.id : null,
    success_count: count,
  };
}

export function legacySalesRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/sales',
      summary: 'Legacy sales read: one sale type over [start_date, start_date + duration days), walked by id (replaced by /sales-data)',
      tag: 'Legacy',
      access: { kind: 'legacy', module: 'demand', level: 'view' },
      dialect: 'legacy',
      deprecated: true,
      query: legacySalesQuery,
      async handler({ query }) {
        const currentIndex = query.current_index ?? 0;
        const response = await clients.transactional.listLegacySales({
          sale_type_name: query.sale_type_name,
          start_date: query.start_date,
          duration_days: query.duration,
          after_id: currentIndex,
          limit: query.pagination_count,
          include_hierarchy: query.include_flattened_hierarchy === true,
        });
        const flattened = query.include_flattened_hierarchy ? response : undefined;
        const sales = response.records.map((record) => legacySale(record, flattened));
        return { kind: 'json', body: legacyWrapper(response, currentIndex, query.pagination_count, sales) };
      },
    }),
  ];
}
