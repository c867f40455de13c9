/** The identity vocabulary the tokens service stores and the gateway enforces. */

/** What a token may do (gate a). `*` covers every scope. */
export const SCOPES = [
  'public_api.read',
  'public_api.write',
  'public_api.compute',
  'public_api.workflow',
  'public_api.workflow.replace',
  '*',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Workspace modules a user holds a level on (gate b). */
export const PERMISSION_MODULES = ['public_api', 'master_data', 'demand', 'inventory', 'supply', 'finance'] as const;
export type PermissionModule = (typeof PERMISSION_MODULES)[number];

export const LEVELS = ['planner', 'view', 'none'] as const;
export type Level = (typeof LEVELS)[number];
