import type { Level, PermissionModule } from '@supply/contracts';
import type { Doc } from '@supply/kit';

export { LEVELS, PERMISSION_MODULES, type Level, type PermissionModule } from '@supply/contracts';

export interface TenantRecord extends Doc {
  _id: string; // the slug, as it appears in every path
  name: string;
  public_api_enabled: boolean;
  rate_limit: number;
  rate_window_seconds: number;
  monthly_credits: number;
  created_at: string;
}

export interface UserRecord extends Doc {
  _id: number;
  tenant: string;
  email: string; // lower-cased
  password_hash: string;
  is_admin: boolean;
  levels: Partial<Record<PermissionModule, Level>>;
  created_at: string;
  updated_at: string;
}

export interface TokenRecord extends Doc {
  _id: number;
  tenant: string;
  user_id: number;
  name: string;
  secret_sha256: string;
  scopes: string[];
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** The token it was provisioned from, if any. */
  parent_token_id?: number | null;
}

/** A signed-in API Access page user; `_id` is the sha256 of the cookie value. */
export interface SessionRecord extends Doc {
  _id: string;
  tenant: string;
  user_id: number;
  created_at: string;
  expires_at: string;
}

export const DEFAULT_LIMITS = { rate_limit: 120, rate_window_seconds: 60, monthly_credits: 100_000 } as const;
