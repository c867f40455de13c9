import type { LotSizingRule } from '@supply/contracts';
import { tenantCollection } from '../common/collections';
import type { TenantRecord } from '../common/records';

export { LOT_SIZING_RULES, type LotSizingRule } from '@supply/contracts';

/** Replenishment parameters, in the planning engine's units (quantities in stocking units, times in buckets). */
export interface PlanningParameterFields {
  lead_time: number;
  safety_stock: number;
  min_order_qty: number;
  order_multiple: number;
  max_order_qty: number;
  lot_sizing_rule: LotSizingRule;
  fixed_order_qty: number;
  ordering_cost: number;
  holding_rate: number;
  unit_cost: number;
  periods_of_supply: number;
  partner: boolean;
  /** Target service level 0 < x < 1 sizing safety stock from forecast intervals; 0: the fixed `safety_stock`. */
  service_level: number;
}

export interface ItemLocationRecord extends TenantRecord, PlanningParameterFields {
  item_id: number;
  location_id: number;
}

/** What an omitted parameter means: no constraint, lot for lot, 25 % yearly holding. */
export const PARAMETER_DEFAULTS: Omit<PlanningParameterFields, 'unit_cost'> = {
  lead_time: 0,
  safety_stock: 0,
  min_order_qty: 0,
  order_multiple: 0,
  max_order_qty: 0,
  lot_sizing_rule: 'lot_for_lot',
  fixed_order_qty: 0,
  ordering_cost: 0,
  holding_rate: 0.25,
  periods_of_supply: 0,
  partner: false,
  service_level: 0,
};

export const ITEM_LOCATIONS = tenantCollection(
  'item_locations',
  [['item_id', 'location_id']],
  [
    {
      name: 'tenant_location',
      keys: [
        ['tenant', 1],
        ['location_id', 1],
      ],
    },
  ],
);
