/**
 * The forecast request (POST /forecasts/generate) as the compute service takes it: the
 * published enumerations, defaults and limits, and the checks of every field. The gateway
 * validates the same fields from these constants before metering; the service checks
 * again because it is the owner of the contract.
 */
import { ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import type { supply_compute_v1 as pb } from '@supply/protos';
import {
  ALGORITHMS,
  CONSTRAINTS,
  MISSING_IMPUTATIONS,
  isAlgorithm,
  isConstraint,
  isMissingImputation,
  type Algorithm,
  type Constraint,
  type MissingImputation,
} from '../engines/forecast/index';

export { ALGORITHMS, CONSTRAINTS, MISSING_IMPUTATIONS };

/**
 * What a run forecasts: one item-customer-group, every customer group of an item, every
 * item of a customer group, or every item-customer-group of the tenant.
 */
export const FORECAST_SCOPES = ['series', 'item', 'customer_group', 'all'] as const;
export type ForecastScope = (typeof FORECAST_SCOPES)[number];

export const DEFAULT_FORECAST_PERIODS = 12;
/** A year of days, seven years of weeks, thirty of months. */
export const MAX_FORECAST_PERIODS = 366;
export const MAX_NAME_LENGTH = 255;

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

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

function realDate(text: string): string | null {
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
  if (ISO_DATE.test(text)) return realDate(text);
  const m = ISO_DATE_TIME.exec(text);
  if (!m || realDate(m[1]!) === null || Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return null;
  const offset = m[6];
  const zone = !offset || offset.toUpperCase() === 'Z' ? 'Z' : offset.includes(':') ? offset : `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const at = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4] ?? '00'}${(m[5] ?? '').slice(0, 4)}${zone}`);
  return Number.isFinite(at) ? new Date(at).toISOString().slice(0, 10) : null;
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
  const date = realDate(value);
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
  else if (periods > MAX_FORECAST_PERIODS) check.add('forecast_periods', `The forecast periods field must not be greater than ${MAX_FORECAST_PERIODS}.`);
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
