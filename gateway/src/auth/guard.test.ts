import { strict as assert } from 'node:assert';
import type { Request, Response } from 'express';
import { isAppError } from '@supply/kit';
import { formatToken, newSecret } from '@supply/contracts';
import type { RouteDef } from '../http/routes';
import { createGuard, levelAllows, scopeAllows, type Principal } from './guard';

const NOW = new Date('2026-06-01T00:00:00Z');
const token = formatToken(7, newSecret());
const principal = (over: Partial<Principal> = {}): Principal => ({
  tenant: 'demo',
  token_id: 7,
  user_id: 3,
  user_email: 'planner@demo.test',
  scopes: ['public_api.read'],
  expires_at: '',
  is_admin: false,
  levels: { public_api: 'planner', master_data: 'view' },
  public_api_enabled: true,
  ...over,
});
const route = (access: RouteDef['access']) => ({ access }) as RouteDef;
const read = route({ kind: 'token', scope: 'public_api.read', module: 'master_data', level: 'view', cost: 'read' });
const write = route({ kind: 'token', scope: 'public_api.write', module: 'master_data', level: 'planner', cost: 'write' });

function request(authorization: string | undefined, tenant = 'demo'): Request {
  return {
    params: { tenant },
    get: (h: string) => (h.toLowerCase() === 'authorization' ? authorization : undefined),
  } as unknown as Request;
}

/** What the guard decided: `pass`, or the error code and problem slug it threw. */
async function outcome(resolvesTo: Principal, authorization: string | undefined, r = read, tenant = 'demo') {
  const seen: string[] = [];
  const guard = createGuard({
    now: () => NOW,
    authenticate: async (value) => {
      seen.push(value);
      return resolvesTo;
    },
  });
  const res = { locals: {} } as Response;
  try {
    await guard(r, request(authorization, tenant), res);
    return { result: 'pass', seen };
  } catch (err) {
    assert.ok(isAppError(err), String(err));
    return { result: `${err.code}${err.details.problem ? `:${err.details.problem}` : ''}`, seen };
  }
}

describe('guard', () => {
  it('passes a valid token with the scope and the level', async () => {
    assert.deepEqual(await outcome(principal(), `Bearer ${token}`), { result: 'pass', seen: [token] });
  });

  it('rejects malformed bearer values without asking the tokens service', async () => {
    const [id, secret] = token.split('|') as [string, string];
    const crcFlipped = secret.slice(0, -1) + (secret.endsWith('0') ? '1' : '0');
    const variants = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Basic ${token}`,
      `Bearer  ${token}`,
      `Bearer ${token} `,
      ` Bearer ${token}`,
      `Bearer ${id}${secret}`,
      `Bearer x${id}|${secret}`,
      `Bearer ${id}|sk_${secret.slice(4)}`,
      `Bearer ${id}|${crcFlipped}`,
      `Bearer ${token}x`,
    ];
    for (const v of variants) {
      assert.deepEqual(await outcome(principal(), v), { result: 'unauthenticated', seen: [] }, String(v));
    }
  });

  it("answers another tenant's token exactly like an unknown one", async () => {
    assert.equal((await outcome(principal({ tenant: 'acme' }), `Bearer ${token}`)).result, 'unauthenticated');
  });

  it('refuses an expired principal even when it was cached', async () => {
    const expired = principal({ expires_at: new Date(NOW.getTime() - 1).toISOString() });
    assert.equal((await outcome(expired, `Bearer ${token}`)).result, 'unauthenticated');
    const live = principal({ expires_at: new Date(NOW.getTime() + 1000).toISOString() });
    assert.equal((await outcome(live, `Bearer ${token}`)).result, 'pass');
  });

  it('answers 403 when the workspace has the Public API module disabled', async () => {
    assert.equal((await outcome(principal({ public_api_enabled: false }), `Bearer ${token}`)).result, 'permission_denied:forbidden');
  });

  it('names the gate that refused', async () => {
    assert.equal((await outcome(principal(), `Bearer ${token}`, write)).result, 'permission_denied:insufficient-scope');
    const writer = principal({ scopes: ['public_api.write'] });
    assert.equal((await outcome(writer, `Bearer ${token}`, write)).result, 'permission_denied:insufficient-permission');
  });

  it('scope and level rules', () => {
    assert.ok(scopeAllows(['*'], 'public_api.workflow.replace'));
    assert.ok(!scopeAllows(['public_api.workflow'], 'public_api.workflow.replace'));
    assert.ok(scopeAllows([], null));
    assert.ok(levelAllows({ is_admin: true, levels: {} }, 'finance', 'planner'));
    assert.ok(!levelAllows({ is_admin: false, levels: { public_api: 'none', finance: 'planner' } }, 'finance', 'view'));
    assert.ok(levelAllows({ is_admin: false, levels: { public_api: 'view', finance: 'view' } }, 'finance', 'view'));
    assert.ok(!levelAllows({ is_admin: false, levels: { public_api: 'view', finance: 'view' } }, 'finance', 'planner'));
  });
});
