/**
 * The forecast request (POST /forecasts/generate) as the compute service takes it: the checks
 * of every field against the published enumerations, defaults and limits (in the contracts,
 * which the gateway validates from before metering); the service checks again because it is
 * the owner of the contract.
 */
import {
  DEFAULT_FORECAST_PERIODS,
  FORECAST_SCOPES,
  MAX_FORECAST_PERIODS,
  MAX_NAME_LENGTH,
  calendarDateOf,
  type ForecastScope,
  type supply_compute_v1 as pb,
} from '@supply/contracts';
import { ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import {
  isAlgorithm,
  isConstraint,
  isMissingImputation,
  type Algorithm,
  type Constraint,
  type MissingImputation,
} from '../engines/forecast/index';

export type { ForecastScope };

/** A validated request with every default filled in. */
export interface ForecastRequest {
  item_customer_group_id: number | null;
  item_name: string | null;
  item_id: number | null;
  customer_group_name: string | null;
  customer_group_id: number | null;
  /** Null: follows from the identifiers (see `resolveSelection`). */
  scope: ForecastScope | null;
  forecast_periods: number;
  algorithm: Algorithm;
  missing_imputation: MissingImputation;
  forecast_constraint: Constraint;
  /** YYYY-MM-DD, inclusive; null = open. */
  history_start: string | null;
  history_end: string | null;
  dry_run: boolean;
}

class Check {
  readonly fields: FieldErrors = fieldErrors();
  add(field: string, message: string): void {
    (this.fields[field] ??= []).push(message);
  }
  done(): void {
    if (Object.keys(this.fields).length > 0) throw new ValidationError(this.fields);
  }
}

const label = (field: string) => field.replace(/_/g, ' ');

function optionalId(check: Check, field: string, value: number): number | null {
  if (value === 0) return null;
  if (!Number.isSafeInteger(value) || value < 1) check.add(field, `The ${label(field)} field must be at least 1.`);
  return value;
}

function optionalName(check: Check, field: string, value: string): string | null {
  if (value === '') return null;
  if (value.length > MAX_NAME_LENGTH) check.add(field, `The ${label(field)} field must not be greater than ${MAX_NAME_LENGTH} characters.`);
  return value;
}

function optionalEnum<T extends string>(check: Check, field: string, value: string, is: (v: string) => v is T, fallback: T): T {
  if (value === '') return fallback;
  if (!is(value)) {
    check.add(field, `The selected ${label(field)} is invalid.`);
    return fallback;
  }
  return value;
}

function optionalDate(check: Check, field: string, value: string): string | null {
  if (value === '') return null;
  const date = calendarDateOf(value);
  if (date === null) check.add(field, `The ${label(field)} field must be a valid date-time.`);
  return date;
}

export function isForecastScope(value: string): value is ForecastScope {
  return (FORECAST_SCOPES as readonly string[]).includes(value);
}

/** Checks every field (all errors at once, as a 422) and fills in the defaults. */
export function readForecastRequest(request: pb.GenerateForecastsRequest): ForecastRequest {
  const check = new Check();
  const periods = request.forecast_periods === 0 ? DEFAULT_FORECAST_PERIODS : request.forecast_periods;
  if (!Number.isSafeInteger(periods) || periods < 1) check.add('forecast_periods', 'The forecast periods field must be at least 1.');
  else if (periods > MAX_FORECAST_PERIODS)
    check.add('forecast_periods', `The forecast periods field must not be greater than ${MAX_FORECAST_PERIODS}.`);
  const parsed: ForecastRequest = {
    item_customer_group_id: optionalId(check, 'item_customer_group_id', request.item_customer_group_id),
    item_name: optionalName(check, 'item_name', request.item_name),
    item_id: optionalId(check, 'item_id', request.item_id),
    customer_group_name: optionalName(check, 'customer_group_name', request.customer_group_name),
    customer_group_id: optionalId(check, 'customer_group_id', request.customer_group_id),
    scope: request.scope === '' ? null : optionalEnum(check, 'scope', request.scope, isForecastScope, 'all'),
    forecast_periods: periods,
    algorithm: optionalEnum(check, 'algorithm', request.algorithm, isAlgorithm, 'auto'),
    missing_imputation: optionalEnum(check, 'missing_imputation', request.missing_imputation, isMissingImputation, 'auto'),
    forecast_constraint: optionalEnum(check, 'forecast_constraint', request.forecast_constraint, isConstraint, 'auto'),
    history_start: optionalDate(check, 'history_start', request.history_start),
    history_end: optionalDate(check, 'history_end', request.history_end),
    dry_run: request.dry_run,
  };
  if (parsed.history_start && parsed.history_end && parsed.history_start > parsed.history_end) {
    check.add('history_end', 'The history end field must be a date after or equal to history start.');
  }
  check.done();
  return parsed;
}
