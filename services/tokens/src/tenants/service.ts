import { ConflictError, NotFoundError, TENANT_SLUG, ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import type { IdentityEvents } from '../events';
import { DEFAULT_LIMITS, type TenantRecord } from '../records';
import type { IdentityStore } from '../repository';

/** First path segments the gateway serves outside any tenant. */
const RESERVED_SLUGS = new Set(['healthz', 'readyz', 'openapi.json', 'problems', 'assets', 'api', 'login', 'logout']);

export function tenantView(t: TenantRecord): supply_tokens_v1.Tenant {
  return {
    slug: t._id,
    name: t.name,
    public_api_enabled: t.public_api_enabled,
    rate_limit: t.rate_limit,
    rate_window_seconds: t.rate_window_seconds,
    monthly_credits: t.monthly_credits,
  };
}

export async function requireTenant(store: IdentityStore, slug: string): Promise<TenantRecord> {
  const tenant = await store.tenants.findById(slug);
  if (!tenant) throw new NotFoundError(`No tenant ${slug}.`);
  return tenant;
}

export async function createTenant(
  store: IdentityStore,
  req: supply_tokens_v1.CreateTenantRequest,
  now: Date,
): Promise<supply_tokens_v1.Tenant> {
  if (!TENANT_SLUG.test(req.slug) || RESERVED_SLUGS.has(req.slug)) {
    throw new ValidationError({
      slug: ['The slug must be 1 to 63 lower-case letters, digits or dashes, start with a letter or digit, and not be reserved.'],
    });
  }
  if (req.name.length > 255) throw new ValidationError({ name: ['The name field must not be greater than 255 characters.'] });
  if (await store.tenants.findById(req.slug)) throw new ConflictError(`Tenant ${req.slug} already exists.`);
  const tenant = await store.tenants.insertOne({
    _id: req.slug,
    name: req.name.trim() || req.slug,
    public_api_enabled: req.public_api_enabled,
    ...DEFAULT_LIMITS,
    created_at: now.toISOString(),
  });
  return tenantView(tenant);
}

/** Changes the fields that are set; module and limit changes reach every gateway through `events`. */
export async function updateTenant(
  store: IdentityStore,
  events: IdentityEvents,
  req: supply_tokens_v1.UpdateTenantRequest,
): Promise<supply_tokens_v1.Tenant> {
  const fields: FieldErrors = fieldErrors();
  const set: Partial<TenantRecord> = {};
  if (req.name !== undefined) {
    if (!req.name.trim() || req.name.length > 255) fields.name = ['The name must be 1 to 255 characters.'];
    else set.name = req.name.trim();
  }
  if (req.public_api_enabled !== undefined) set.public_api_enabled = req.public_api_enabled;
  const positive = (key: 'rate_limit' | 'rate_window_seconds' | 'monthly_credits', value: number | undefined) => {
    if (value === undefined) return;
    if (!Number.isSafeInteger(value) || value < 1) fields[key] = [`The ${key.replace(/_/g, ' ')} must be a positive integer.`];
    else set[key] = value;
  };
  positive('rate_limit', req.rate_limit);
  positive('rate_window_seconds', req.rate_window_seconds);
  positive('monthly_credits', req.monthly_credits);
  if (Object.keys(fields).length) throw new ValidationError(fields);
  await requireTenant(store, req.slug);
  const updated = Object.keys(set).length
    ? await store.tenants.findOneAndUpdate({ _id: req.slug }, { $set: set })
    : await store.tenants.findById(req.slug);
  if (!updated) throw new NotFoundError(`No tenant ${req.slug}.`);
  await events.accessChanged({ tenant: req.slug });
  return tenantView(updated);
}
