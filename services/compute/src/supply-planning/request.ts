/**
 * What POST /supply-plans/generate accepts, checked once: the gateway runs these rules before
 * metering (so a malformed request spends nothing) and the compute service runs them again
 * for any other caller of GenerateSupplyPlan.
 */
import type { FieldErrors } from '@supply/kit';
import { SUPPLY_POLICIES, type SupplyPolicy } from '../engines/mrp';

/**
 * How a request plans its item-locations (docs/supply-planning.md).
 * - `standard`: each as our own stocking location: Forecast demand, falling back to History a year earlier.
 * - `partner`: any item-location: a trading partner's (VMI) from the partner's sell-through and
 *   on-hand when it reports sell-through, any other from its Forecast, falling back to History.
 * - `auto`: each in the mode its `partner` flag says (partner ones partner, the rest standard).
 */
export const GENERATION_MODES = ['standard', 'partner', 'auto'] as const;
export type GenerationMode = (typeof GENERATION_MODES)[number];

export const MAX_NAME = 255;

/** The identifying fields of a request, as given (0 / "" = absent). */
export interface TargetFields {
  item_location_id: number;
  item_name: string;
  location_name: string;
  view_id: number;
  view_name: string;
}

export type Target =
  | { kind: 'item_location'; item_location_id: number }
  | { kind: 'names'; item_name: string; location_name: string }
  | { kind: 'view'; view_id: number; view_name: string };

export interface GenerationRequest {
  mode: GenerationMode;
  supply_policy: SupplyPolicy;
  target: Target;
}

const label = (field: string) => field.replace(/_/g, ' ');

/** The identifier groups a request may name exactly one of, in the order conflicts are reported. */
const GROUPS = [['item_location_id'], ['item_name', 'location_name'], ['view_id'], ['view_name']] as const;

/**
 * Field errors of the identifying fields taken together: exactly one of `item_location_id`,
 * `item_name` with `location_name`, `view_id`, `view_name`. Empty when they name one target.
 */
export function targetErrors(fields: TargetFields): FieldErrors {
  const errors: FieldErrors = {};
  const present = (field: keyof TargetFields) => (typeof fields[field] === 'number' ? fields[field] !== 0 : fields[field] !== '');
  const given = GROUPS.filter((group) => group.some(present));
  if (given.length === 0) {
    errors.item_location_id = ['The item location id field is required when none of item name / location name / view id / view name are present.'];
    return errors;
  }
  const first = given[0]!;
  const firstName = label(first.filter(present)[0]!);
  for (const group of given.slice(1)) {
    for (const field of group.filter(present)) {
      errors[field] = [`The ${label(field)} field prohibits ${firstName} from being present: name one item-location or one view.`];
    }
  }
  if (first === GROUPS[1]) {
    if (!present('item_name')) errors.item_name = ['The item name field is required when location name is present.'];
    if (!present('location_name')) errors.location_name = ['The location name field is required when item name is present.'];
  }
  return errors;
}

/** Field errors of the identifiers' own formats (the gateway's schema checks these itself). */
function formatErrors(fields: TargetFields): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of ['item_name', 'location_name', 'view_name'] as const) {
    if (fields[field].length > MAX_NAME) errors[field] = [`The ${label(field)} field must not be greater than ${MAX_NAME} characters.`];
  }
  for (const field of ['item_location_id', 'view_id'] as const) {
    if (!Number.isSafeInteger(fields[field]) || fields[field] < 0) errors[field] = [`The ${label(field)} field must be at least 1.`];
  }
  return errors;
}

/** Validates a GenerateSupplyPlan request; field errors for everything wrong with it at once. */
export function parseGenerationRequest(
  request: TargetFields & { mode: string; supply_policy: string },
): { ok: true; value: GenerationRequest } | { ok: false; errors: FieldErrors } {
  const fields: TargetFields = {
    item_location_id: request.item_location_id,
    item_name: request.item_name.trim(),
    location_name: request.location_name.trim(),
    view_id: request.view_id,
    view_name: request.view_name.trim(),
  };
  const errors: FieldErrors = { ...targetErrors(fields), ...formatErrors(fields) };
  if (request.mode === '') errors.mode = ['The mode field is required.'];
  else if (!(GENERATION_MODES as readonly string[]).includes(request.mode)) errors.mode = ['The selected mode is invalid.'];
  const policy = request.supply_policy || 'unconstrained';
  if (!(SUPPLY_POLICIES as readonly string[]).includes(policy)) errors.supply_policy = ['The selected supply policy is invalid.'];
  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const target: Target = request.item_location_id
    ? { kind: 'item_location', item_location_id: request.item_location_id }
    : request.item_name.trim()
      ? { kind: 'names', item_name: request.item_name.trim(), location_name: request.location_name.trim() }
      : { kind: 'view', view_id: request.view_id, view_name: request.view_name.trim() };
  return { ok: true, value: { mode: request.mode as GenerationMode, supply_policy: policy as SupplyPolicy, target } };
}
