import type { Collection, UpsertRow } from '@supply/kit';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { conditionsOf, readPage } from '../common/pages';
import { checkBatch, FieldCheck, MAX_BULK, nameKey } from '../common/records';
import {
  FINANCIAL_PLAN_FIELDS,
  PLAN_PAGES,
  SUPPLY_PLAN_FIELDS,
  toSupplyPlanRecord,
  type FinancialPlanRowDoc,
  type PlanRowDoc,
  type SupplyPlanRowDoc,
} from './repository';

export interface PlanDeps {
  supplyPlans: Collection<SupplyPlanRowDoc>;
  financialPlans: Collection<FinancialPlanRowDoc>;
  now(): string;
}

type Bucket = { period_start: string } & Record<string, unknown>;

/**
 * Replaces the plan of one item-location in one view: buckets are upserted by period
 * (so a reader never sees the plan missing), then the periods the new plan lacks are deleted.
 */
async function replacePlan<D extends PlanRowDoc>(
  collection: Collection<D>,
  tenant: string,
  target: pb.PlanTarget | undefined,
  buckets: readonly Bucket[],
  fields: readonly string[],
  now: string,
): Promise<pb.ReplacePlanResponse> {
  checkBatch('buckets', buckets.length);
  const check = new FieldCheck();
  if (!target) check.add('target', 'The target field is required.');
  for (const field of ['item_location_id', 'item_id', 'location_id', 'view_id', 'plan_run_id'] as const)
    check.id(`target.${field}`, target?.[field] ?? 0);
  for (const field of ['item_name', 'location_name', 'view_name'] as const) check.name(`target.${field}`, target?.[field] ?? '');
  const periods = new Set<string>();
  buckets.forEach((bucket, i) => {
    check.date(`buckets.${i}.period_start`, bucket.period_start);
    if (periods.has(bucket.period_start))
      check.add(`buckets.${i}.period_start`, `The buckets.${i}.period_start field has a duplicate value.`);
    periods.add(bucket.period_start);
    for (const field of fields) check.number(`buckets.${i}.${field}`, bucket[field] as number);
  });
  check.done();
  const t = target!;
  const key = { tenant, item_location_id: t.item_location_id, view_id: t.view_id };
  const names = {
    plan_run_id: t.plan_run_id,
    view_name: t.view_name,
    view_name_lower: nameKey(t.view_name),
    item_id: t.item_id,
    item_name: t.item_name,
    item_name_lower: nameKey(t.item_name),
    location_id: t.location_id,
    location_name: t.location_name,
    location_name_lower: nameKey(t.location_name),
  };
  const rows = buckets.map((bucket): UpsertRow<D> => ({
    key: { ...key, period_start: bucket.period_start } as Partial<D>,
    set: { ...names, ...Object.fromEntries(fields.map((field) => [field, bucket[field]])), updated_at: now } as Partial<D>,
    setOnInsert: { created_at: now } as Partial<D>,
  }));
  const written = rows.length > 0 ? await collection.bulkUpsert(rows) : { inserted: 0, updated: 0, unchanged: 0 };
  const deleted = await collection.deleteMany({ ...key, period_start: { $nin: [...periods] } });
  return { written: written.inserted + written.updated + written.unchanged, deleted };
}

export function replaceSupplyPlan(deps: PlanDeps, tenant: string, request: pb.ReplaceSupplyPlanRequest): Promise<pb.ReplacePlanResponse> {
  return replacePlan(deps.supplyPlans, tenant, request.target, request.buckets as unknown as Bucket[], SUPPLY_PLAN_FIELDS, deps.now());
}

export function replaceFinancialPlan(
  deps: PlanDeps,
  tenant: string,
  request: pb.ReplaceFinancialPlanRequest,
): Promise<pb.ReplacePlanResponse> {
  return replacePlan(
    deps.financialPlans,
    tenant,
    request.target,
    request.buckets as unknown as Bucket[],
    FINANCIAL_PLAN_FIELDS,
    deps.now(),
  );
}

function planConditions(tenant: string, filter: pb.PlanFilter | undefined) {
  return conditionsOf(
    tenant,
    { item_name_lower: filter?.item_names, location_name_lower: filter?.location_names, view_name_lower: filter?.view_names },
    {
      field: 'period_start',
      from: filter?.period_start_from ?? '',
      to: filter?.period_start_to ?? '',
      names: ['period_start_from', 'period_start_to'],
    },
  );
}

export function queryPlans<D extends PlanRowDoc>(collection: Collection<D>, tenant: string, request: pb.QueryPlansRequest) {
  return readPage(collection, PLAN_PAGES, planConditions(tenant, request.filter), request.page);
}

/** One item-location's supply plan in every view (or the one named), by view then period. */
export async function listLegacySupplyPlan(
  deps: PlanDeps,
  tenant: string,
  request: pb.ListLegacySupplyPlanRequest,
): Promise<pb.ListLegacySupplyPlanResponse> {
  const check = new FieldCheck();
  check.name('item_name', request.item_name);
  check.name('location_name', request.location_name);
  if (request.view_name.length > 255) check.add('view_name', 'The view name field must not be greater than 255 characters.');
  check.done();
  const rows = await deps.supplyPlans.find(
    {
      tenant,
      item_name_lower: nameKey(request.item_name),
      location_name_lower: nameKey(request.location_name),
      ...(request.view_name ? { view_name_lower: nameKey(request.view_name) } : {}),
    },
    {
      sort: [
        ['view_name_lower', 1],
        ['period_start', 1],
        ['_id', 1],
      ],
      limit: MAX_BULK,
    },
  );
  return { records: rows.map(toSupplyPlanRecord) };
}
