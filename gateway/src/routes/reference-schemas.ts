import { z } from 'zod';
import { CALENDAR_BUCKETS as BUCKETS, LEVEL_KINDS, LOCATION_TYPES, LOT_SIZING_RULES, TIMING_SPANS, WEEK_DAYS } from '@supply/contracts';

/**
 * Request and record shapes of the reference resources. Requests are strict (an unknown
 * field is "prohibited", so ids, tenants and timestamps can never be mass-assigned) and
 * trimmed like Laravel's TrimStrings; the reference service checks what needs its data
 * (names taken, referenced names existing, rules tying fields together).
 */

/** Most records one POST takes (a JSON array); more is a 422 on the body. */
export const MAX_WRITE_BATCH = 1000;
/** Most item-locations one view lists. */
export const MAX_VIEW_ITEM_LOCATIONS = 10_000;

const name = z.string().trim().min(1).max(255);
const amount = z.number().min(0).max(1e12);
const count = (max: number) => z.number().int().min(0).max(max);
/** Level name -> value; `null` or "" clears the level. */
const hierarchyValues = z.record(z.string().trim().min(1).max(255), z.string().trim().max(255).nullable());

export const inputs = {
  uom: z.strictObject({ name, abbreviation: z.string().trim().min(1).max(32) }),
  hierarchyLevel: z.strictObject({ kind: z.enum(LEVEL_KINDS), name, position: z.number().int().min(1).max(100).optional() }),
  item: z.strictObject({
    name,
    description: z.string().trim().max(2000).nullable().optional(),
    uom: name,
    unit_cost: amount.optional(),
    unit_price: amount.optional(),
    hierarchy: hierarchyValues.optional(),
  }),
  customerGroup: z.strictObject({ name, hierarchy: hierarchyValues.optional() }),
  calendar: z.strictObject({
    name,
    bucket: z.enum(BUCKETS),
    week_start: z.enum(WEEK_DAYS).optional(),
    start_date: z.iso.date(),
    periods: z.number().int().min(1).max(1000),
  }),
  location: z.strictObject({ name, type: z.enum(LOCATION_TYPES) }),
  itemLocation: z.strictObject({
    item_name: name,
    location_name: name,
    lead_time: count(1000).optional(),
    safety_stock: amount.optional(),
    min_order_qty: amount.optional(),
    order_multiple: amount.optional(),
    max_order_qty: amount.optional(),
    lot_sizing_rule: z.enum(LOT_SIZING_RULES).optional(),
    fixed_order_qty: amount.optional(),
    ordering_cost: amount.optional(),
    holding_rate: z.number().min(0).max(10).optional(),
    unit_cost: amount.optional(),
    periods_of_supply: count(1000).optional(),
    partner: z.boolean().optional(),
    service_level: z
      .number()
      .min(0)
      .lt(1)
      .optional()
      .meta({
        examples: [0.95],
        description:
          'Target service level (0 < x < 1, e.g. 0.95): safety stock is sized from the forecast intervals over the lead time; 0 (default): the fixed safety_stock',
      }),
  }),
  view: z.strictObject({
    name,
    calendar_name: name,
    bucket: z.enum(BUCKETS).optional(),
    horizon: z.number().int().min(1).max(1000).optional(),
    item_location_ids: z.array(z.number().int().min(1)).max(MAX_VIEW_ITEM_LOCATIONS).optional(),
  }),
};

/** Updates take the same fields, all optional; a hierarchy level keeps its kind. */
export const patches = {
  uom: inputs.uom.partial(),
  hierarchyLevel: inputs.hierarchyLevel.omit({ kind: true }).partial(),
  item: inputs.item.partial(),
  customerGroup: inputs.customerGroup.partial(),
  calendar: inputs.calendar.partial(),
  location: inputs.location.partial(),
  itemLocation: inputs.itemLocation.partial(),
  view: inputs.view.partial(),
};

/**
 * One record or an array of 1..MAX_WRITE_BATCH. Errors keep Laravel's paths: `name` for an
 * object, `3.name` for the fourth element of an array, `body` for the array itself.
 */
export function oneOrMany<T extends z.ZodType>(record: T) {
  const many = z.array(record).min(1).max(MAX_WRITE_BATCH);
  return z
    .unknown()
    .transform((value, ctx) => {
      const arrayBody = Array.isArray(value);
      const parsed = (arrayBody ? many : record).safeParse(value, { reportInput: true });
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
        return z.NEVER;
      }
      return { arrayBody, records: (arrayBody ? parsed.data : [parsed.data]) as Array<z.output<T>> };
    })
    .meta({ oneOf: [z.toJSONSchema(record, { io: 'input' }), z.toJSONSchema(many, { io: 'input' })] });
}

const stamps = { created_at: z.string(), updated_at: z.string() };
const id = z.number().int();
const hierarchy = z.record(z.string(), z.string());

/** Records as the API answers them (documentation of the success bodies). */
export const records = {
  uom: z.object({ id, name: z.string(), abbreviation: z.string(), ...stamps }).meta({ id: 'Uom' }),
  hierarchyLevel: z
    .object({ id, kind: z.enum(LEVEL_KINDS), name: z.string(), position: z.number().int(), ...stamps })
    .meta({ id: 'HierarchyLevel' }),
  item: z
    .object({
      id,
      name: z.string(),
      description: z.string(),
      uom: z.string(),
      uom_id: id,
      unit_cost: z.number(),
      unit_price: z.number(),
      hierarchy,
      ...stamps,
    })
    .meta({ id: 'Item' }),
  customerGroup: z.object({ id, name: z.string(), hierarchy, ...stamps }).meta({ id: 'CustomerGroup' }),
  saleType: z.object({ id, name: z.string(), ...stamps }).meta({ id: 'SaleType' }),
  timingInterval: z.object({ id, name: z.enum(TIMING_SPANS), ...stamps }).meta({ id: 'TimingInterval' }),
  calendar: z
    .object({
      id,
      name: z.string(),
      bucket: z.enum(BUCKETS),
      week_start: z.enum(WEEK_DAYS),
      start_date: z.string(),
      periods: z.number().int(),
      ...stamps,
    })
    .meta({ id: 'Calendar' }),
  location: z.object({ id, name: z.string(), type: z.enum(LOCATION_TYPES), ...stamps }).meta({ id: 'Location' }),
  itemLocation: z
    .object({
      id,
      item_id: id,
      item_name: z.string(),
      location_id: id,
      location_name: z.string(),
      lead_time: z.number().int(),
      safety_stock: z.number(),
      min_order_qty: z.number(),
      order_multiple: z.number(),
      max_order_qty: z.number(),
      lot_sizing_rule: z.enum(LOT_SIZING_RULES),
      fixed_order_qty: z.number(),
      ordering_cost: z.number(),
      holding_rate: z.number(),
      unit_cost: z.number(),
      periods_of_supply: z.number().int(),
      partner: z.boolean(),
      service_level: z
        .number()
        .describe('0: fixed safety_stock; else the target service level sizing safety stock from forecast intervals'),
      ...stamps,
    })
    .meta({ id: 'ItemLocation' }),
  view: z
    .object({
      id,
      name: z.string(),
      calendar_id: id,
      calendar_name: z.string(),
      bucket: z.enum(BUCKETS),
      horizon: z.number().int(),
      item_location_ids: z.array(id),
      ...stamps,
    })
    .meta({ id: 'View' }),
};
