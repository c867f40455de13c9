/**
 * What the fuzz suite needs and GET /openapi.json does not say. Operations, parameters and
 * request bodies (content types and schemas) come from the document itself
 * (tests/fuzz/support/openapi.ts); only these remain, each a thing the document does not type:
 * - the rows of a CSV `file` part (the document types the part as a text/csv string) and of
 *   the legacy loads' `payload` (typed as objects, "with the fields of the sync rows"): both
 *   are the rows of the JSON syncs, which the document does type (SalesSyncRow, InventorySyncRow);
 * - path values that reach records: the fuzz target's workspace, and ids small enough to exist
 *   in it (the document types ids as any positive integer);
 * - the server-rendered pages, which take client input but are not part of the API document.
 */
import type { JsonSchema, OperationBody } from './support/openapi';

/** The CSV columns and the document's row schema of the routes that take rows in a file or an untyped payload. */
export const ROWS: Record<string, { csv: 'sales' | 'inventory'; schema: 'SalesSyncRow' | 'InventorySyncRow' }> = {
  'POST /{tenant}/api/v1/workflows/sync-sales/import': { csv: 'sales', schema: 'SalesSyncRow' },
  'POST /{tenant}/api/v1/workflows/sync-inventory/import': { csv: 'inventory', schema: 'InventorySyncRow' },
  'POST /{tenant}/api/v1/sales': { csv: 'sales', schema: 'SalesSyncRow' },
  'POST /{tenant}/api/v1/inventory/import/process': { csv: 'inventory', schema: 'InventorySyncRow' },
};

/** Path parameters: the demo workspace, and ids of records it has (`x-small`: most values at most this). */
export const PATH_PARAMS: Record<string, JsonSchema> = {
  id: { type: 'integer', minimum: 1, maximum: 9_007_199_254_740_991, 'x-small': 150 },
  job_id: { type: 'integer', minimum: 1, maximum: 9_007_199_254_740_991, 'x-small': 40 },
  tenant: { type: 'string', enum: ['demo'] },
};

/** Routes outside the document (the login and API Access pages) that take client input all the same. */
export const EXTRA_OPERATIONS: Array<{ method: string; path: string; page: true; body?: OperationBody }> = [
  { method: 'get', path: '/{tenant}/login', page: true },
  {
    method: 'post',
    path: '/{tenant}/login',
    page: true,
    body: {
      contentTypes: ['application/x-www-form-urlencoded'],
      schema: {
        type: 'object',
        properties: {
          email: { type: 'string', minLength: 1, maxLength: 255 },
          password: { type: 'string', minLength: 1, maxLength: 255 },
          _token: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
    },
  },
  { method: 'get', path: '/{tenant}/settings/api-access', page: true },
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
        properties: {
          mode: { type: 'string', enum: ['standard', 'auto', 'partner'] },
          item_location_id: { type: 'integer', minimum: 1, maximum: 120 },
        },
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
