import { ConflictError, NotFoundError, ValidationError, fieldErrors, type FieldErrors } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import type { IdentityEvents } from '../events';
import { LEVELS, PERMISSION_MODULES, type Level, type PermissionModule, type UserRecord } from '../records';
import type { IdentityStore } from '../repository';
import { requireTenant } from '../tenants/service';
import { hashPassword } from './password';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const MIN_PASSWORD = 8;

export function userView(u: UserRecord): supply_tokens_v1.User {
  return {
    id: u._id,
    tenant: u.tenant,
    email: u.email,
    is_admin: u.is_admin,
    levels: Object.fromEntries(PERMISSION_MODULES.map((m) => [m, u.levels[m] ?? 'none'])),
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
}

export async function findUser(store: IdentityStore, tenant: string, email: string): Promise<UserRecord | null> {
  return store.users.findOne({ tenant, email: email.trim().toLowerCase() });
}

export async function requireUser(store: IdentityStore, tenant: string, email: string): Promise<UserRecord> {
  const user = await findUser(store, tenant, email);
  if (!user) throw new NotFoundError(`No user ${email} in ${tenant}.`);
  return user;
}

/** `{ module: level }` from a request, each checked against the known modules and levels. */
function parseLevels(raw: Record<string, string>, fields: FieldErrors): Partial<Record<PermissionModule, Level>> {
  const out: Partial<Record<PermissionModule, Level>> = {};
  for (const [module, level] of Object.entries(raw)) {
    if (!(PERMISSION_MODULES as readonly string[]).includes(module)) {
      fields[`levels.${module}`] = [`Unknown module ${module}; modules are ${PERMISSION_MODULES.join(', ')}.`];
    } else if (!(LEVELS as readonly string[]).includes(level)) {
      fields[`levels.${module}`] = [`Unknown level ${level}; levels are ${LEVELS.join(', ')}.`];
    } else {
      out[module as PermissionModule] = level as Level;
    }
  }
  return out;
}

function checkPassword(password: string, fields: FieldErrors): void {
  if (password.length < MIN_PASSWORD) fields.password = [`The password field must be at least ${MIN_PASSWORD} characters.`];
  else if (password.length > 1024) fields.password = ['The password field must not be greater than 1024 characters.'];
}

export async function createUser(
  store: IdentityStore,
  tenant: string,
  req: supply_tokens_v1.CreateUserRequest,
  now: Date,
): Promise<supply_tokens_v1.User> {
  const fields: FieldErrors = fieldErrors();
  const email = req.email.trim().toLowerCase();
  if (!EMAIL.test(email)) fields.email = ['The email field must be a valid email address.'];
  checkPassword(req.password, fields);
  const levels = parseLevels(req.levels, fields);
  if (Object.keys(fields).length) throw new ValidationError(fields);
  await requireTenant(store, tenant);
  if (await findUser(store, tenant, email)) throw new ConflictError(`User ${email} already exists in ${tenant}.`);
  const user = await store.users.insertOne({
    tenant,
    email,
    password_hash: await hashPassword(req.password),
    is_admin: req.is_admin,
    levels,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  });
  return userView(user);
}

/**
 * Changes the admin flag, merges levels, or sets a new password (which ends the user's
 * page sessions). Gateways hear of it before the next request.
 */
export async function updateUser(
  store: IdentityStore,
  events: IdentityEvents,
  tenant: string,
  req: supply_tokens_v1.UpdateUserRequest,
  now: Date,
): Promise<supply_tokens_v1.User> {
  const fields: FieldErrors = fieldErrors();
  const levels = parseLevels(req.levels, fields);
  if (req.password !== undefined) checkPassword(req.password, fields);
  if (Object.keys(fields).length) throw new ValidationError(fields);
  const user = await requireUser(store, tenant, req.email);
  const set: Record<string, unknown> = { updated_at: now.toISOString() };
  if (req.is_admin !== undefined) set.is_admin = req.is_admin;
  if (Object.keys(levels).length) set.levels = { ...user.levels, ...levels };
  if (req.password !== undefined) set.password_hash = await hashPassword(req.password);
  const updated = await store.users.findOneAndUpdate({ _id: user._id }, { $set: set });
  if (!updated) throw new NotFoundError(`No user ${req.email} in ${tenant}.`);
  if (req.password !== undefined) await store.sessions.deleteMany({ user_id: user._id });
  await events.accessChanged({ tenant, user_id: user._id });
  return userView(updated);
}
