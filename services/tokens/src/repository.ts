import type { Collection, Store } from '@supply/kit';
import type { SessionRecord, TenantRecord, TokenRecord, UserRecord } from './records';

/** The tokens service's collections, with the indexes its reads use. */
export interface IdentityStore {
  tenants: Collection<TenantRecord>;
  users: Collection<UserRecord>;
  tokens: Collection<TokenRecord>;
  sessions: Collection<SessionRecord>;
}

export async function openIdentityStore(store: Store): Promise<IdentityStore> {
  const [tenants, users, tokens, sessions] = await Promise.all([
    store.collection<TenantRecord>({ name: 'tenants' }),
    store.collection<UserRecord>({
      name: 'users',
      autoIncrement: true,
      indexes: [
        {
          name: 'tenant_email',
          keys: [
            ['tenant', 1],
            ['email', 1],
          ],
          unique: true,
        },
      ],
    }),
    store.collection<TokenRecord>({
      name: 'tokens',
      autoIncrement: true,
      indexes: [
        {
          name: 'tenant_user',
          keys: [
            ['tenant', 1],
            ['user_id', 1],
            ['_id', 1],
          ],
        },
      ],
    }),
    store.collection<SessionRecord>({
      name: 'sessions',
      indexes: [
        { name: 'user', keys: [['user_id', 1]] },
        { name: 'expires', keys: [['expires_at', 1]] },
      ],
    }),
  ]);
  return { tenants, users, tokens, sessions };
}
