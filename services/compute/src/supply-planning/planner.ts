/**
 * Plans a batch of item-locations of one view: reads their data in bulk, maps it onto the
 * engine per mode, runs the engine, and stores each supply plan and financial plan through
 * transactional. One item-location's bad input fails that item-location only.
 */
import { isAppError, type Clients, type FieldErrors } from '@supply/kit';
import type { supply_compute_v1 as pb, supply_reference_v1 as ref, supply_transactional_v1 as tx } from '@supply/contracts';
import { financialPlan, planItemLocation, PlanningInputError, type PlanResult, type SupplyPolicy } from '../engines/mrp';
import type { BucketClock } from './calendar';
import { partnerPlanInput, partnerSellThrough, standardDemand, standardPlanInput, standardSource, type PlanContext } from './inputs';
import type { GenerationMode } from './request';
import { resolveSafetyStock, type SeriesUncertainty, type UncertaintyReader } from './safety-stock';
import { CALLS_IN_FLIGHT, itemLocationKey, mapLimit, readPlanningData, type PlanningData } from './sources';

/** What every item-location of one plan run shares. */
export interface RunSpec {
  plan_run_id: number;
  mode: GenerationMode;
  supply_policy: SupplyPolicy;
  view: { id: number; name: string };
  clock: BucketClock;
}

export type PlannedMode = 'standard' | 'partner';

/**
 * The mode an item-location is planned in under a request's mode. `partner` plans every
 * item-location (sell-through where a partner reports it, else forecast or history); `auto`
 * follows the item-location's `partner` flag.
 */
export function plannedMode(mode: GenerationMode, itemLocation: ref.ItemLocation): PlannedMode {
  if (mode === 'auto') return itemLocation.partner ? 'partner' : 'standard';
  return mode;
}

export type Outcome =
  | { ok: true; plan: pb.SupplyPlan }
  /** `field` is the engine's input path (`parameters.fixed_order_qty`) or the stored record's. */
  | { ok: false; itemLocation: ref.ItemLocation; field: string; message: string };

/** `The parameters.lead_time must be an integer.`: an engine error as a 422 message. */
export function inputErrorMessage(err: PlanningInputError): string {
  return `The ${err.field} ${err.message.slice(err.field.length + 2)}.`;
}

/** Plans `records` (item-locations of the run's view) and stores their plans; infrastructure failures throw. */
export async function planBatch(
  clients: Clients,
  run: RunSpec,
  records: readonly ref.PlanningParameters[],
  uncertainty?: UncertaintyReader,
): Promise<Outcome[]> {
  const itemLocations = records.map((r) => r.item_location!);
  const withLevel = itemLocations.filter((il) => il.service_level > 0).map((il) => il.item_id);
  const [data, intervals] = await Promise.all([
    readPlanningData(clients, run.clock, itemLocations),
    uncertainty && withLevel.length > 0 ? uncertainty(withLevel) : Promise.resolve(new Map<number, SeriesUncertainty[]>()),
  ]);
  return mapLimit(records, CALLS_IN_FLIGHT, async (record) => {
    const itemLocation = record.item_location!;
    let planned: ReturnType<typeof planOne>;
    try {
      planned = planOne(run, record, data, intervals);
    } catch (err) {
      if (err instanceof PlanningInputError) return { ok: false, itemLocation, field: err.field, message: inputErrorMessage(err) };
      throw err;
    }
    try {
      await store(clients, run, itemLocation, planned.message.rows, planned.financial);
    } catch (err) {
      // A value the stored record refused fails this item-location; anything else is the infrastructure's.
      if (!isAppError(err) || err.code !== 'invalid_argument') throw err;
      const [field, messages] = Object.entries((err.details.fields as FieldErrors | undefined) ?? {})[0] ?? ['plan', [err.message]];
      return { ok: false, itemLocation, field, message: messages[0] ?? err.message };
    }
    return { ok: true, plan: planned.message };
  });
}

function planOne(run: RunSpec, record: ref.PlanningParameters, data: PlanningData, intervals: ReadonlyMap<number, SeriesUncertainty[]>) {
  const itemLocation = record.item_location!;
  const mode = plannedMode(run.mode, itemLocation);
  const stock = data.onHand.get(itemLocationKey(itemLocation.item_id, itemLocation.location_id)) ?? { quantity: 0, date: '' };
  const byGroup = data.demand.get(itemLocation.item_id) ?? new Map();
  const attribution = data.ownership.attribute(itemLocation.location_name, data.sharingLocations.get(itemLocation.item_id) ?? 1);
  // Only a trading partner's item-location reports sell-through; without any, partner mode plans like standard.
  const sellThrough = mode === 'partner' && itemLocation.partner ? partnerSellThrough(byGroup, attribution) : null;
  // Sell-through plans the partner's own account whole; otherwise the location's share of its groups.
  const planned =
    sellThrough && attribution.own_group
      ? { groups: [attribution.own_group.id], share: 1 }
      : { groups: attribution.customer_group_ids, share: attribution.share };
  const safetyStock = resolveSafetyStock({
    fixed: itemLocation.safety_stock,
    service_level: itemLocation.service_level,
    lead_time: itemLocation.lead_time,
    bucket: run.clock.bucket,
    plan_start: run.clock.periodStarts[0]!,
    customer_group_ids: planned.groups,
    share: planned.share,
    series: intervals.get(itemLocation.item_id) ?? [],
  });
  const context: PlanContext = {
    clock: run.clock,
    supply_policy: run.supply_policy,
    itemLocation,
    on_hand: stock.quantity,
    safety_stock: safetyStock.quantity,
  };
  let plan: PlanResult;
  let demand: pb.DemandSource;
  const base = { customer_groups: attribution.customer_group_names, share: attribution.share };
  if (sellThrough) {
    plan = planItemLocation(partnerPlanInput(context, sellThrough));
    const window = run.clock.sellThroughWindow;
    demand = {
      ...base,
      basis: 'sell_through_average',
      source: 'sell_through',
      forecast_buckets: 0,
      history_buckets: 0,
      mixed_buckets: 0,
      sell_through_from: run.clock.startOf(-window),
      sell_through_to: run.clock.endOf(-1),
      sell_through_per_bucket: plan.gross_requirements[0] ?? 0,
    };
  } else {
    const standard = standardDemand(run.clock.buckets, byGroup, attribution);
    plan = planItemLocation(standardPlanInput(context, standard));
    demand = {
      ...base,
      basis: 'forecast_else_history',
      source: standardSource(standard),
      forecast_buckets: standard.forecast_buckets,
      history_buckets: standard.history_buckets,
      mixed_buckets: standard.mixed_buckets,
      sell_through_from: '',
      sell_through_to: '',
      sell_through_per_bucket: 0,
    };
  }
  const unitCost = itemLocation.unit_cost;
  const financial = financialPlan(plan, { unit_cost: unitCost, unit_price: record.unit_price });
  const json = plan.toJSON();
  const message: pb.SupplyPlan = {
    plan_run_id: run.plan_run_id,
    mode,
    supply_policy: run.supply_policy,
    item_location_id: itemLocation.id,
    item_id: itemLocation.item_id,
    item_name: itemLocation.item_name,
    location_id: itemLocation.location_id,
    location_name: itemLocation.location_name,
    view_id: run.view.id,
    view_name: run.view.name,
    bucket: run.clock.bucket,
    on_hand: stock.quantity,
    on_hand_date: stock.date,
    lot_policy: {
      lot_sizing_rule: json.lot_sizing_rule,
      lead_time: json.lead_time,
      safety_stock: json.safety_stock,
      min_order_qty: plan.lot_policy.min_order_qty,
      order_multiple: plan.lot_policy.order_multiple,
      max_order_qty: itemLocation.max_order_qty,
      fixed_order_qty: plan.lot_policy.fixed_order_qty,
      economic_order_qty: json.economic_order_qty ?? 0,
      periods_of_supply: json.periods_of_supply ?? 0,
    },
    demand,
    rows: json.rows,
    exceptions: json.exceptions.map((e) => ({
      type: e.type,
      period_start: e.period_start,
      quantity: e.quantity,
      buckets_past_due: e.buckets_past_due ?? 0,
    })),
    planned_orders: json.planned_orders.map((o) => ({
      release_period: o.release_period,
      receipt_period: o.receipt_period,
      quantity: o.quantity,
      past_due: o.past_due,
    })),
    past_due_releases: json.past_due_releases,
    financial_totals: financial.totals,
    unit_cost: unitCost,
    unit_price: record.unit_price,
    safety_stock: safetyStock,
  };
  return { financial, message };
}

async function store(
  clients: Clients,
  run: RunSpec,
  itemLocation: ref.ItemLocation,
  rows: pb.SupplyPlanRow[],
  financial: ReturnType<typeof financialPlan>,
): Promise<void> {
  const target: tx.PlanTarget = {
    item_location_id: itemLocation.id,
    item_id: itemLocation.item_id,
    item_name: itemLocation.item_name,
    location_id: itemLocation.location_id,
    location_name: itemLocation.location_name,
    view_id: run.view.id,
    view_name: run.view.name,
    plan_run_id: run.plan_run_id,
  };
  await Promise.all([
    clients.transactional.replaceSupplyPlan({ target, buckets: rows }),
    clients.transactional.replaceFinancialPlan({
      target,
      buckets: financial.rows.map((row) => ({
        period_start: row.period_start,
        satisfied_demand: row.satisfied_demand,
        revenue: row.revenue,
        cost_of_goods: row.cost_of_goods,
        gross_margin: row.gross_margin,
        purchase_spend: row.purchase_spend,
        inventory_value: row.inventory_value,
      })),
    }),
  ]);
}
