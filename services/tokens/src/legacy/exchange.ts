import { AppError, type Meter } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import type { IdentityStore } from '../repository';
import { createLegacyToken } from '../tokens/create';
import { verifyCredentials } from '../users/credentials';

/**
 * Legacy `POST /tokens/create`: email and password for a `*` token. Only once the
 * credentials are right does it tell that the workspace's Public API is off or that the
 * user has no access to it, so the answer never reveals more than the caller knows.
 */
export async function exchangeCredentials(
  store: IdentityStore,
  meter: Meter,
  tenant: string,
  req: supply_tokens_v1.ExchangeCredentialsRequest,
  now: Date,
): Promise<supply_tokens_v1.CreatedToken> {
  const user = await verifyCredentials(store, meter, tenant, req.email, req.password);
  const tenantRecord = await store.tenants.findById(tenant);
  if (!tenantRecord?.public_api_enabled) {
    throw new AppError('permission_denied', 'The Public API module is disabled for this workspace.', { problem: 'forbidden' });
  }
  if (!user.is_admin && (user.levels.public_api ?? 'none') === 'none') {
    throw new AppError('permission_denied', 'This user has no access to the Public API module.', { problem: 'insufficient-permission' });
  }
  return createLegacyToken(store, user, now);
}
