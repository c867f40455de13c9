import type { IdentityStore } from '../repository';
import { DEFAULT_LIMITS, PERMISSION_MODULES, type Level, type PermissionModule } from '../records';
import { hashPassword } from '../users/password';

const every = (level: Level) => Object.fromEntries(PERMISSION_MODULES.map((m) => [m, level])) as Record<PermissionModule, Level>;

/** The demo tenants and users (one of each access level worth trying), created once when the store is empty. */
export async function seedDemoIdentity(store: IdentityStore, password: string, at: Date): Promise<boolean> {
  if ((await store.tenants.count({})) > 0) return false;
  const now = at.toISOString();
  const tenants = [
    { _id: 'demo', name: 'Demo Workspace', public_api_enabled: true },
    { _id: 'acme', name: 'Acme Corporation', public_api_enabled: true },
    { _id: 'closed', name: 'Closed Workspace', public_api_enabled: false },
  ];
  for (const t of tenants) await store.tenants.insertOne({ ...t, ...DEFAULT_LIMITS, created_at: now });
  const hash = await hashPassword(password);
  const users: Array<{ tenant: string; email: string; is_admin: boolean; levels: Partial<Record<PermissionModule, Level>> }> = [
    { tenant: 'demo', email: 'admin@demo.test', is_admin: true, levels: every('planner') },
    { tenant: 'demo', email: 'planner@demo.test', is_admin: false, levels: every('planner') },
    { tenant: 'demo', email: 'viewer@demo.test', is_admin: false, levels: every('view') },
    { tenant: 'demo', email: 'nodemand@demo.test', is_admin: false, levels: { ...every('planner'), demand: 'none' } },
    { tenant: 'acme', email: 'admin@acme.test', is_admin: true, levels: every('planner') },
    { tenant: 'closed', email: 'admin@closed.test', is_admin: true, levels: every('planner') },
  ];
  for (const u of users) await store.users.insertOne({ ...u, password_hash: hash, created_at: now, updated_at: now });
  return true;
}
