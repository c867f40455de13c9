import type { Collection, CollectionSpec, Doc, Store } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import type { PageSpec } from '../common/pages';
import { tenantIndex as index } from '../common/records';

/**
 * One bucket of a plan for one item-location in one view, from the plan run that wrote it
 * last. Supply plan rows carry the MRP record's quantities, financial plan rows its money
 * figures (services/compute/src/engines/mrp/README.md); both share the rest.
 */
export interface PlanRowDoc extends Doc {
  _id: number;
  tenant: string;
  plan_run_id: number;
  view_id: number;
  view_name: string;
  view_name_lower: string;
  item_location_id: number;
  item_id: number;
  item_name: string;
  item_name_lower: string;
  location_id: number;
  location_name: string;
  location_name_lower: string;
  period_start: string;
  created_at: string;
  updated_at: string;
}

export type SupplyPlanRowDoc = PlanRowDoc & Omit<pb.SupplyPlanBucket, 'period_start'>;
export type FinancialPlanRowDoc = PlanRowDoc & Omit<pb.FinancialPlanBucket, 'period_start'>;

export const SUPPLY_PLAN_FIELDS = [
  'gross_requirements',
  'scheduled_receipts',
  'projected_available',
  'net_requirements',
  'planned_receipts',
  'planned_releases',
] as const satisfies ReadonlyArray<keyof pb.SupplyPlanBucket>;

export const FINANCIAL_PLAN_FIELDS = [
  'satisfied_demand',
  'revenue',
  'cost_of_goods',
  'gross_margin',
  'purchase_spend',
  'inventory_value',
] as const satisfies ReadonlyArray<keyof pb.FinancialPlanBucket>;

/**
 * Served orders: `id`, `period_start`, `item_name`, `location_name` (either direction), and
 * `period_start` with one item or one view (a whole plan of a view in period order).
 */
const planCollection = (name: string): CollectionSpec => ({
  name,
  autoIncrement: true,
  indexes: [
    {
      name: 'plan_key',
      keys: [
        ['tenant', 1],
        ['item_location_id', 1],
        ['view_id', 1],
        ['period_start', 1],
      ],
      unique: true,
    },
    index('tenant_id', '_id'),
    index('period_start', 'period_start', '_id'),
    index('item_id', 'item_name_lower', '_id'),
    index('item_period', 'item_name_lower', 'period_start', '_id'),
    index('location_id', 'location_name_lower', '_id'),
    index('view_period', 'view_name_lower', 'period_start', '_id'),
  ],
});

export const SUPPLY_PLANS = planCollection('supply_plans');
export const FINANCIAL_PLANS = planCollection('financial_plans');

export function openSupplyPlans(store: Store): Promise<Collection<SupplyPlanRowDoc>> {
  return store.collection<SupplyPlanRowDoc>(SUPPLY_PLANS);
}

export function openFinancialPlans(store: Store): Promise<Collection<FinancialPlanRowDoc>> {
  return store.collection<FinancialPlanRowDoc>(FINANCIAL_PLANS);
}

export const PLAN_PAGES: PageSpec = {
  sorts: {
    period_start: { field: 'period_start', type: 'string' },
    item_name: { field: 'item_name_lower', type: 'string' },
    location_name: { field: 'location_name_lower', type: 'string' },
  },
  fanOut: ['item_name_lower', 'view_name_lower'],
};

function planRecord(doc: PlanRowDoc) {
  return {
    id: doc._id,
    plan_run_id: doc.plan_run_id,
    view_id: doc.view_id,
    view_name: doc.view_name,
    item_location_id: doc.item_location_id,
    item_id: doc.item_id,
    item_name: doc.item_name,
    location_id: doc.location_id,
    location_name: doc.location_name,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

export function toSupplyPlanRecord(doc: SupplyPlanRowDoc): pb.SupplyPlanRecord {
  const bucket = { period_start: doc.period_start } as pb.SupplyPlanBucket;
  for (const field of SUPPLY_PLAN_FIELDS) bucket[field] = doc[field];
  return { ...planRecord(doc), bucket };
}

export function toFinancialPlanRecord(doc: FinancialPlanRowDoc): pb.FinancialPlanRecord {
  const bucket = { period_start: doc.period_start } as pb.FinancialPlanBucket;
  for (const field of FINANCIAL_PLAN_FIELDS) bucket[field] = doc[field];
  return { ...planRecord(doc), bucket };
}
