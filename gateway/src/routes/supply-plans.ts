import { z } from 'zod';
import type { Clients } from '@supply/kit';
import { GENERATION_MODES, MAX_NAME_LENGTH, SUPPLY_POLICIES, planTargetErrors, type supply_compute_v1 as pb } from '@supply/contracts';
import { defineRoute, linksSchema, type Reply, type RouteDef } from '../http/routes';
import { jobResource, jobSchema } from './jobs';
import { idempotencyKeyOf } from './workflows';

/** One item-location is planned while the client waits; this bounds the wait. */
export const PLAN_DEADLINE_MS = 60_000;

const id = z.number().int().min(1);
const name = z.string().trim().max(MAX_NAME_LENGTH);

const body = z
  .strictObject({
    // A string first, so an absent mode reads "required" and a wrong one "invalid".
    mode: z
      .string()
      .pipe(z.enum(GENERATION_MODES))
      .describe(
        'partner (any item-location: sell-through where a trading partner reports it, else forecast, else history) | standard | auto (docs/supply-planning.md)',
      ),
    item_location_id: id.optional(),
    item_name: name.optional().describe('with location_name'),
    location_name: name.optional().describe('with item_name'),
    view_id: id.optional(),
    view_name: name.optional(),
    supply_policy: z.enum(SUPPLY_POLICIES).optional().describe('default unconstrained'),
  })
  .superRefine((value, ctx) => {
    const errors = planTargetErrors({
      item_location_id: value.item_location_id ?? 0,
      item_name: value.item_name ?? '',
      location_name: value.location_name ?? '',
      view_id: value.view_id ?? 0,
      view_name: value.view_name ?? '',
    });
    for (const [path, messages] of Object.entries(errors))
      for (const message of messages) ctx.addIssue({ code: 'custom', path: [path], message });
  });

const MRP_FIELDS = [
  'gross_requirements',
  'scheduled_receipts',
  'projected_available',
  'net_requirements',
  'planned_receipts',
  'planned_releases',
] as const;
const planRow = z
  .object({
    plan_run_id: z.number().int(),
    view_id: z.number().int(),
    view_name: z.string(),
    item_location_id: z.number().int(),
    item_id: z.number().int(),
    item_name: z.string(),
    location_id: z.number().int(),
    location_name: z.string(),
    period_start: z.string(),
    ...Object.fromEntries(MRP_FIELDS.map((field) => [field, z.number()])),
  })
  .meta({ id: 'PlanRow' });

/** Where the planned safety stock came from: the fixed quantity, or the service level and the forecast spread over the lead time. */
function safetyStockOf(s: pb.SafetyStockSource | undefined) {
  if (!s || s.source !== 'service_level') {
    return {
      source: 'fixed',
      quantity: s?.quantity ?? 0,
      service_level: s?.service_level ? s.service_level : null,
      ...(s?.note ? { note: s.note } : {}),
    };
  }
  return {
    source: 'service_level',
    quantity: s.quantity,
    service_level: s.service_level,
    z: s.z,
    sigma_lead_time: s.sigma_lead_time,
    series: s.series,
    forecast_run_ids: s.forecast_run_ids,
  };
}

/** The 200 body: the stored MRP rows in `data`, the why of the plan in `meta`. */
function presentPlan(plan: pb.SupplyPlan): Reply {
  const ids = {
    plan_run_id: plan.plan_run_id,
    view_id: plan.view_id,
    view_name: plan.view_name,
    item_location_id: plan.item_location_id,
    item_id: plan.item_id,
    item_name: plan.item_name,
    location_id: plan.location_id,
    location_name: plan.location_name,
  };
  const demand = plan.demand!;
  const exceptions = plan.exceptions.length;
  return {
    kind: 'envelope',
    status: 200,
    message:
      `Supply plan generated for ${plan.item_name} at ${plan.location_name}: ${plan.rows.length} ${plan.bucket} buckets of view ${plan.view_name}, ` +
      `${plan.mode} mode, plan run ${plan.plan_run_id}; ${exceptions} exception${exceptions === 1 ? '' : 's'}.`,
    data: plan.rows.map((row) => ({ ...ids, ...row })),
    meta: {
      plan_run_id: plan.plan_run_id,
      mode: plan.mode,
      supply_policy: plan.supply_policy,
      bucket: plan.bucket,
      on_hand: { quantity: plan.on_hand, inventory_date: plan.on_hand_date || null },
      lot_policy: plan.lot_policy,
      safety_stock: safetyStockOf(plan.safety_stock),
      demand:
        demand.basis === 'sell_through_average'
          ? {
              source: demand.source,
              basis: demand.basis,
              customer_groups: demand.customer_groups,
              sell_through_from: demand.sell_through_from,
              sell_through_to: demand.sell_through_to,
              sell_through_per_bucket: demand.sell_through_per_bucket,
            }
          : {
              source: demand.source,
              basis: demand.basis,
              customer_groups: demand.customer_groups,
              share: demand.share,
              forecast_buckets: demand.forecast_buckets,
              history_buckets: demand.history_buckets,
              mixed_buckets: demand.mixed_buckets,
            },
      exceptions: plan.exceptions.map((e) => ({
        type: e.type,
        period_start: e.period_start,
        quantity: e.quantity,
        ...(e.type === 'release_in_past' ? { buckets_past_due: e.buckets_past_due } : {}),
      })),
      planned_orders: plan.planned_orders,
      past_due_releases: plan.past_due_releases,
      financial: { unit_cost: plan.unit_cost, unit_price: plan.unit_price, totals: plan.financial_totals },
    },
  };
}

export function supplyPlanRoutes(clients: Clients): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/:tenant/api/v1/supply-plans/generate',
      summary:
        'Generate supply and financial plans: one item-location (item_location_id, or item_name + location_name) answers 200 with the plan; ' +
        'a view (view_id or view_name) answers 202 with a job. Idempotency-Key supported',
      tag: 'Compute',
      access: { kind: 'token', scope: 'public_api.compute', module: 'supply', level: 'planner', cost: 'compute' },
      dialect: 'current',
      body,
      alsoAnswers: [202],
      serviceIdempotency: true,
      response: z.object({
        message: z.string(),
        data: z.array(z.union([planRow, jobSchema])),
        meta: z.record(z.string(), z.unknown()),
        links: linksSchema,
      }),
      async handler({ body: input, req, params }) {
        const answer = await clients.compute.generateSupplyPlan(
          {
            mode: input.mode,
            item_location_id: input.item_location_id ?? 0,
            item_name: input.item_name ?? '',
            location_name: input.location_name ?? '',
            view_id: input.view_id ?? 0,
            view_name: input.view_name ?? '',
            supply_policy: input.supply_policy ?? '',
            idempotency_key: idempotencyKeyOf(req),
          },
          { deadlineMs: PLAN_DEADLINE_MS },
        );
        const replayed: Record<string, string> = answer.replayed ? { 'Idempotent-Replayed': 'true' } : {};
        const outcome = answer.outcome!;
        if (outcome.$case === 'plan') return { ...presentPlan(outcome.plan), headers: replayed };
        const job = outcome.job;
        const location = `/${params.tenant}/api/v1/jobs/${job.id}`;
        return {
          kind: 'envelope',
          status: 202,
          message: `The supply plan run was accepted as job ${job.id} over ${job.progress?.total ?? 0} item-locations; follow it at GET ${location}.`,
          data: [jobResource(job)],
          headers: { ...replayed, Location: location },
        };
      },
    }),
  ];
}
