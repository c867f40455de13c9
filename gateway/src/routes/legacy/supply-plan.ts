import { z } from 'zod';
import type { Clients } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { defineRoute, type RouteDef } from '../../http/routes';

const name = z.string().trim().min(1).max(255);

/** The flat legacy supply plan row: the bucket's figures beside the item, location and view names. */
const legacyRow = (record: pb.SupplyPlanRecord) => ({
  id: record.id,
  view_name: record.view_name,
  item_name: record.item_name,
  location_name: record.location_name,
  period_start: record.bucket?.period_start ?? '',
  gross_requirements: record.bucket?.gross_requirements ?? 0,
  scheduled_receipts: record.bucket?.scheduled_receipts ?? 0,
  projected_available: record.bucket?.projected_available ?? 0,
  net_requirements: record.bucket?.net_requirements ?? 0,
  planned_receipts: record.bucket?.planned_receipts ?? 0,
  planned_releases: record.bucket?.planned_releases ?? 0,
  plan_run_id: record.plan_run_id,
  created_at: record.created_at,
  updated_at: record.updated_at,
});

export function legacySupplyPlanRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/:tenant/api/v1/supply-plan/get/process',
      summary: 'Legacy supply plan read: one item-location, every view unless view_name is given (replaced by /supply-plans)',
      tag: 'Legacy',
      access: { kind: 'legacy', module: 'supply', level: 'view' },
      dialect: 'legacy',
      deprecated: true,
      query: z.object({ item_name: name, location_name: name, view_name: name.optional() }),
      async handler({ query }) {
        const { records } = await clients.transactional.listLegacySupplyPlan({
          item_name: query.item_name,
          location_name: query.location_name,
          view_name: query.view_name ?? '',
        });
        return {
          kind: 'json',
          body: {
            success_message:
              records.length > 0
                ? `Supply plan retrieved successfully: ${records.length} periods.`
                : `No supply plan found for ${query.item_name} at ${query.location_name}.`,
            supply_plans: records.map(legacyRow),
            total: records.length,
          },
        };
      },
    }),
  ];
}
