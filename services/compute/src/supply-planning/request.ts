/**
 * What POST /supply-plans/generate accepts, checked once: the gateway runs these rules before
 * metering (so a malformed request spends nothing) and the compute service runs them again
 * for any other caller of GenerateSupplyPlan.
 */
import {
  GENERATION_MODES,
  MAX_NAME_LENGTH,
  SUPPLY_POLICIES,
  planTargetErrors,
  type GenerationMode,
  type PlanTargetFields as TargetFields,
  type SupplyPolicy,
} from '@supply/contracts';
import type { FieldErrors } from '@supply/kit';

export type { GenerationMode, TargetFields };

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

/** Field errors of the identifiers' own formats (the gateway's schema checks these itself). */
function formatErrors(fields: TargetFields): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of ['item_name', 'location_name', 'view_name'] as const) {
    if (fields[field].length > MAX_NAME_LENGTH)
      errors[field] = [`The ${label(field)} field must not be greater than ${MAX_NAME_LENGTH} characters.`];
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
  const errors: FieldErrors = { ...planTargetErrors(fields), ...formatErrors(fields) };
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
