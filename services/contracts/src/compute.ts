/**
 * The compute requests' published enumerations, defaults and limits, and the checks the gateway
 * runs before metering (so a malformed request spends nothing) and compute runs again as the
 * owner of the contract.
 */

// ---------- POST /forecasts/generate ----------

export const FORECAST_ALGORITHMS = [
  'auto',
  'ets',
  'ses',
  'holt',
  'damped',
  'holt_winters_additive',
  'holt_winters_multiplicative',
  'theta',
  'optimized_theta',
  'arima',
  'combination',
  'seasonal_naive',
  'naive',
  'naive2',
  'croston',
  'sba',
  'tsb',
  'adida',
] as const;
export type ForecastAlgorithm = (typeof FORECAST_ALGORITHMS)[number];

export const MISSING_IMPUTATIONS = ['auto', 'zero', 'linear', 'forward_fill', 'none'] as const;
export type MissingImputation = (typeof MISSING_IMPUTATIONS)[number];

export const FORECAST_CONSTRAINTS = ['auto', 'non_negative', 'integer', 'none'] as const;
export type ForecastConstraint = (typeof FORECAST_CONSTRAINTS)[number];

/**
 * What a run forecasts: one item-customer-group, every customer group of an item, every
 * item of a customer group, or every item-customer-group of the tenant.
 */
export const FORECAST_SCOPES = ['series', 'item', 'customer_group', 'all'] as const;
export type ForecastScope = (typeof FORECAST_SCOPES)[number];

export const DEFAULT_FORECAST_PERIODS = 12;
/** A year of days, seven years of weeks, thirty of months. */
export const MAX_FORECAST_PERIODS = 366;
/** Longest item, customer group, location or view name a compute request takes. */
export const MAX_NAME_LENGTH = 255;

/** Syntetos-Boylan demand classes a forecast run reports per series (plus series with no demand). */
export const SERIES_CLASSES = ['smooth', 'erratic', 'intermittent', 'lumpy', 'no_demand'] as const;
export type SeriesClass = (typeof SERIES_CLASSES)[number];

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/** The text when it is a real calendar date `YYYY-MM-DD`, else null. */
export function calendarDateOf(text: string): string | null {
  if (!ISO_DATE.test(text)) return null;
  const at = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(at) && new Date(at).toISOString().slice(0, 10) === text ? text : null;
}

/**
 * The history bound a client sent, as the UTC calendar date it falls on: an ISO 8601
 * date-time (`2024-12-30T00:00:00Z`; offsets allowed, none means UTC) or a plain date.
 * Null when it is neither.
 */
export function historyDateOf(text: string): string | null {
  if (ISO_DATE.test(text)) return calendarDateOf(text);
  const m = ISO_DATE_TIME.exec(text);
  if (!m || calendarDateOf(m[1]!) === null || Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return null;
  const offset = m[6];
  const zone = !offset || offset.toUpperCase() === 'Z' ? 'Z' : offset.includes(':') ? offset : `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const at = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4] ?? '00'}${(m[5] ?? '').slice(0, 4)}${zone}`);
  return Number.isFinite(at) ? new Date(at).toISOString().slice(0, 10) : null;
}

// ---------- POST /supply-plans/generate ----------

/**
 * How a request plans its item-locations (docs/supply-planning.md).
 * - `standard`: each as our own stocking location: Forecast demand, falling back to History a year earlier.
 * - `partner`: any item-location: a trading partner's (VMI) from the partner's sell-through and
 *   on-hand when it reports sell-through, any other from its Forecast, falling back to History.
 * - `auto`: each in the mode its `partner` flag says (partner ones partner, the rest standard).
 */
export const GENERATION_MODES = ['standard', 'partner', 'auto'] as const;
export type GenerationMode = (typeof GENERATION_MODES)[number];

/** Whether planned orders may exceed capacity (`unconstrained`) or are capped by it. */
export const SUPPLY_POLICIES = ['unconstrained', 'constrained'] as const;
export type SupplyPolicy = (typeof SUPPLY_POLICIES)[number];

/** Which demand a planned item-location was planned from (`meta.demand.source`). */
export const DEMAND_SOURCES = ['sell_through', 'forecast', 'history'] as const;
export type DemandSource = (typeof DEMAND_SOURCES)[number];

/** The identifying fields of a plan request, as given (0 / "" = absent). */
export interface PlanTargetFields {
  item_location_id: number;
  item_name: string;
  location_name: string;
  view_id: number;
  view_name: string;
}

const label = (field: string) => field.replace(/_/g, ' ');

/** The identifier groups a request may name exactly one of, in the order conflicts are reported. */
const TARGET_GROUPS = [['item_location_id'], ['item_name', 'location_name'], ['view_id'], ['view_name']] as const;

/**
 * Field errors of the identifying fields taken together: exactly one of `item_location_id`,
 * `item_name` with `location_name`, `view_id`, `view_name`. Empty when they name one target.
 */
export function planTargetErrors(fields: PlanTargetFields): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const present = (field: keyof PlanTargetFields) => (typeof fields[field] === 'number' ? fields[field] !== 0 : fields[field] !== '');
  const given = TARGET_GROUPS.filter((group) => group.some(present));
  if (given.length === 0) {
    errors.item_location_id = [
      'The item location id field is required when none of item name / location name / view id / view name are present.',
    ];
    return errors;
  }
  const first = given[0]!;
  const firstName = label(first.filter(present)[0]!);
  for (const group of given.slice(1)) {
    for (const field of group.filter(present)) {
      errors[field] = [`The ${label(field)} field prohibits ${firstName} from being present: name one item-location or one view.`];
    }
  }
  if (first === TARGET_GROUPS[1]) {
    if (!present('item_name')) errors.item_name = ['The item name field is required when location name is present.'];
    if (!present('location_name')) errors.location_name = ['The location name field is required when item name is present.'];
  }
  return errors;
}
