import { z } from 'zod';
import type { Clients } from '@supply/kit';
import { defineRoute, q, type RouteDef } from '../http/routes';

const PREFIX = '/:tenant/api/v1';

/** `page`/`per_page` with the endpoint's own maximum; out of range is 422. */
export const offsetQuery = (maxPerPage: number) =>
  z.strictObject({
    page: q.int(1, 1_000_000).default(1),
    per_page: q.int(1, maxPerPage).default(25),
    filter: z.strictObject({ name: z.string().max(255).optional() }).optional(),
  });

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

const uom = z.object({ id: z.number().int(), name: z.string(), abbreviation: z.string(), created_at: z.string(), updated_at: z.string() });

export function referenceRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: `${PREFIX}/uoms`,
      summary: 'List units of measure (offset pagination)',
      tag: 'Reference data',
      access: { kind: 'token', scope: 'public_api.read', module: 'master_data', level: 'view', cost: 'read' },
      dialect: 'current',
      query: offsetQuery(100),
      response: z.object({ data: z.array(uom), meta: z.object({}), links: z.string() }),
      async handler({ query }) {
        const res = await clients.reference.listUoms({
          page: { page: query.page, per_page: query.per_page, total: 0 },
          filter_name: query.filter?.name ?? '',
        });
        return { kind: 'envelope', data: res.uoms, meta: offsetPagination(query.page, query.per_page, res.page?.total ?? 0, res.uoms.length) };
      },
    }),
  ];
}
