/**
 * What the fuzz suite needs and GET /openapi.json does not say yet (issue #18: no
 * requestBody on the sync, import and legacy load routes, nor on the legacy token exchange;
 * no operationIds; path ids typed as plain strings; pages absent). Kept small and explicit:
 * when the document gains a piece, delete it here.
 */
import type { JsonSchema } from './support/openapi';

const str = (maxLength = 255): JsonSchema => ({ type: 'string', minLength: 1, maxLength });
const bool: JsonSchema = { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false', '1', '0'] }] };
const date: JsonSchema = { type: 'string', format: 'date' };
const quantity: JsonSchema = { type: 'number', minimum: 0, maximum: 1_000_000 };

const salesRow: JsonSchema = {
  type: 'object',
  required: ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'],
  properties: {
    sale_type_name: str(),
    item_name: str(),
    customer_group_name: str(),
    sell_date: date,
    timing_interval: str(),
    quantity,
    uom: str(),
  },
};
const inventoryRow: JsonSchema = {
  type: 'object',
  required: ['item_name', 'location_name', 'inventory_date', 'quantity', 'uom'],
  properties: { item_name: str(), location_name: str(), inventory_date: date, quantity, uom: str(), bin_name: str(), lot_name: str() },
};
const syncBody = (row: JsonSchema, scope: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['data'],
  properties: {
    mode: { type: 'string', enum: ['upsert', 'replace'] },
    dry_run: bool,
    scope,
    options: {
      type: 'object',
      properties: { allow_record_creation: bool, allow_record_update: bool, continue_on_error: bool },
      additionalProperties: false,
    },
    data: { type: 'array', minItems: 1, maxItems: 10_000, items: row },
  },
  additionalProperties: false,
});
const salesScope: JsonSchema = { type: 'object', properties: { sale_type: str(), customer_group: str() } };
const inventoryScope: JsonSchema = { type: 'object', properties: { location: str(), item: str() } };
const legacyBody = (row: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['arguments', 'payload'],
  properties: {
    arguments: {
      type: 'object',
      required: ['allow_record_creation', 'allow_record_update', 'should_continue_on_error'],
      properties: { allow_record_creation: bool, allow_record_update: bool, should_continue_on_error: bool },
    },
    payload: { type: 'array', minItems: 1, maxItems: 10_000, items: row },
  },
});
/** The form fields of a file import besides `file` (docs/workflows.md, File imports). */
const importFields = (scope: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    mode: { type: 'string', enum: ['upsert', 'replace'] },
    dry_run: { type: 'string', enum: ['true', 'false', '1', '0'] },
    scope,
    options: { type: 'object', properties: { allow_record_creation: bool, allow_record_update: bool, continue_on_error: bool } },
    headers_match_exactly: { type: 'string', enum: ['true', 'false'] },
  },
});

export interface BodySupplement {
  contentTypes: string[];
  schema: JsonSchema;
  /** Rows of the CSV `file` part for multipart routes. */
  csv?: 'sales' | 'inventory';
}

/** Request bodies the document leaves out, by operation (`METHOD path`). */
export const BODIES: Record<string, BodySupplement> = {
  'POST /{tenant}/api/v1/workflows/sync-sales': { contentTypes: ['application/json'], schema: syncBody(salesRow, salesScope) },
  'POST /{tenant}/api/v1/workflows/sync-inventory': { contentTypes: ['application/json'], schema: syncBody(inventoryRow, inventoryScope) },
  'POST /{tenant}/api/v1/workflows/sync-sales/import': { contentTypes: ['multipart/form-data'], schema: importFields(salesScope), csv: 'sales' },
  'POST /{tenant}/api/v1/workflows/sync-inventory/import': {
    contentTypes: ['multipart/form-data'],
    schema: importFields(inventoryScope),
    csv: 'inventory',
  },
  'POST /{tenant}/api/v1/sales': { contentTypes: ['application/json', 'multipart/form-data'], schema: legacyBody(salesRow), csv: 'sales' },
  'POST /{tenant}/api/v1/inventory/import/process': {
    contentTypes: ['application/json', 'multipart/form-data'],
    schema: legacyBody(inventoryRow),
    csv: 'inventory',
  },
  'POST /{tenant}/api/v1/tokens/create': {
    contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    schema: { type: 'object', required: ['email', 'password'], properties: { email: str(), password: str(1024) } },
  },
};

/** Path parameters the document types as plain strings. */
export const PATH_PARAMS: Record<string, JsonSchema> = {
  id: { type: 'integer', minimum: 1, maximum: 9_007_199_254_740_991, 'x-small': 150 },
  job_id: { type: 'integer', minimum: 1, maximum: 9_007_199_254_740_991, 'x-small': 40 },
  tenant: { type: 'string', enum: ['demo'] },
  slug: { type: 'string', enum: ['not-found', 'validation-failed', 'bad-request', 'invalid-query'] },
};

/** Routes outside the document (pages, probes) that take client input all the same. */
export const EXTRA_OPERATIONS: Array<{ method: string; path: string; page: true; body?: BodySupplement }> = [
  { method: 'get', path: '/{tenant}/login', page: true },
  {
    method: 'post',
    path: '/{tenant}/login',
    page: true,
    body: { contentTypes: ['application/x-www-form-urlencoded'], schema: { type: 'object', properties: { email: str(), password: str(), _token: str() } } },
  },
  { method: 'get', path: '/{tenant}/settings/api-access', page: true },
  { method: 'get', path: '/problems/{slug}', page: true },
  { method: 'get', path: '/healthz', page: true },
  { method: 'get', path: '/openapi.json', page: true },
];

/**
 * Values of the demo workspace by field name, mixed into generated strings so that valid
 * requests also reach the code behind name resolution, not only its "unknown name" 422.
 */
export const DEMO_VALUES: Record<string, string[]> = {
  uom: ['ea', 'cs', 'kg', 'Each'],
  item_name: ['SKU-0001', 'SKU-0012', 'sku-0040'],
  item: ['SKU-0001', 'SKU-0002'],
  location_name: ['DC-East', 'DC-West', 'Partner-Mart'],
  location: ['DC-East', 'Partner-Mart'],
  customer_group_name: ['Retail', 'Online', 'Wholesale'],
  customer_group: ['Retail', 'Online'],
  sale_type_name: ['History', 'Forecast'],
  sale_type: ['History', 'Forecast'],
  timing_interval: ['week', 'month', 'day'],
  view_name: ['Default'],
  calendar_name: ['Weekly'],
  mode: ['standard', 'partner', 'auto'],
  email: ['planner@demo.test', 'viewer@demo.test'],
  password: ['demo-password-123'],
  name: ['SKU-0001', 'Retail', 'ea', 'Default'],
  sort: ['id', '-id', 'sell_date', '-quantity', 'item_name'],
  include: ['item', 'customer_group', 'hierarchy'],
  group_by: ['endpoint', 'token', 'day'],
};

/**
 * Valid bodies the schema alone would not make, or must not: workspace-wide compute runs
 * take minutes of CPU and then hold the workspace (a documented 503), so the fuzz plans single
 * item-locations and asks forecasts for dry runs; e2e suites cover the real runs.
 */
export const VALID_BODY_OVERRIDES: Record<string, JsonSchema> = {
  'POST /{tenant}/api/v1/forecasts/generate': {
    type: 'object',
    required: ['dry_run'],
    properties: {
      dry_run: { const: true },
      item_name: { type: 'string', enum: ['SKU-0001', 'SKU-0007'] },
      customer_group_name: { type: 'string', enum: ['Retail', 'Online'] },
      algorithm: { type: 'string', enum: ['auto', 'ets', 'croston', 'naive'] },
      forecast_periods: { type: 'integer', minimum: 1, maximum: 366 },
    },
  },
  'POST /{tenant}/api/v1/supply-plans/generate': {
    oneOf: [
      {
        type: 'object',
        required: ['mode', 'item_location_id'],
        properties: { mode: { type: 'string', enum: ['standard', 'auto', 'partner'] }, item_location_id: { type: 'integer', minimum: 1, maximum: 120 } },
      },
      {
        type: 'object',
        required: ['mode', 'item_name', 'location_name'],
        properties: {
          mode: { type: 'string', enum: ['standard', 'auto'] },
          item_name: { type: 'string', enum: ['SKU-0003', 'SKU-0020'] },
          location_name: { type: 'string', enum: ['DC-East', 'DC-West'] },
          supply_policy: { type: 'string', enum: ['unconstrained', 'constrained'] },
        },
      },
    ],
  },
};

/**
 * Fields of invalid bodies that must stay as generated for the request to be harmless: a
 * mutated compute body keeps `dry_run: true` or its single target, never a whole workspace.
 */
export const PINNED_FIELDS: Record<string, Record<string, unknown>> = {
  'POST /{tenant}/api/v1/forecasts/generate': { dry_run: true },
};
