import assert from 'node:assert/strict';
import type { CallOverrides } from '@supply/kit';
import { accessTable, allRoutes, type Access } from '@supply/gateway';
import { LEVELS, PERMISSION_MODULES as MODULES, SCOPES, type Level } from '@supply/contracts';
import { api, startSystem, type TestSystem } from '../support/system';

// A fixed start for the system's clock, so expiry and the legacy sunset do not depend on today.
const CLOCK_NOW = '2026-06-01T00:00:00Z';
const PASSWORD = 'demo-password-123';
const RANK: Record<Level, number> = { none: 0, view: 1, planner: 2 };
const GATE_SLUGS = ['/problems/insufficient-scope', '/problems/insufficient-permission'];

/** A JSON body to assert on. */
const bodyOf = async (res: Response): Promise<any> => res.json();
const asTenant = (tenant: string): CallOverrides => ({ context: { requestId: 'identity-test', tenant } });
const everyModule = (level: Level) => Object.fromEntries(MODULES.map((m) => [m, level]));

/** What gate (b) should decide (at least view on the Public API, and the route's level on its module), written from the rule, not from the guard's code. */
function creatorMayCall(access: Exclude<Access, { kind: 'none' }>, levels: Record<string, Level>): boolean {
  if (RANK[levels.public_api!] < RANK.view) return false;
  return access.module === null || RANK[levels[access.module]!] >= RANK[access.level];
}

describe('identity: tokens, gates and the legacy exchange', function () {
  this.timeout(60_000);
  let sys: TestSystem;

  const tokenFor = (email: string, scopes: string[], tenant = 'demo') => sys.tokenFor(tenant, email, scopes);
  const createUser = (email: string, levels: Record<string, string>, tenant = 'demo', is_admin = false) =>
    sys.clients.tokens.createUser({ email, password: PASSWORD, is_admin, levels }, asTenant(tenant));
  const setUser = (email: string, change: { levels?: Record<string, string>; is_admin?: boolean }) =>
    sys.clients.tokens.updateUser({ email, levels: change.levels ?? {}, is_admin: change.is_admin }, asTenant('demo'));

  before(async () => {
    sys = await startSystem({ env: { CLOCK_NOW } });
    // The table walk sends a few hundred requests per token; metering is not under test here.
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 1_000_000, monthly_credits: 100_000_000 });
  });
  after(() => sys?.stop());

  describe('the access table', () => {
    const table = accessTable(allRoutes({} as never, { now: () => new Date(), revoked: () => undefined }));
    const gated = table.filter((r) => r.access.kind !== 'none');
    const pathOf = (path: string) => path.replace(':tenant', 'demo').replace(/:[A-Za-z_]+/g, '999999999');
    // Past the gates a handler answers whatever it answers (200, 404, 422); small pages keep it quick.
    const call = (row: (typeof table)[number], token: string) =>
      row.method === 'GET' || row.method === 'DELETE'
        ? api(sys, `${pathOf(row.path)}${row.method === 'GET' ? '?per_page=1' : ''}`, { method: row.method, token })
        : api(sys, pathOf(row.path), { method: row.method, token, body: {} });

    it('names a scope or no scope, a module or none, and a level for every route', () => {
      assert.ok(gated.length >= 5);
      for (const row of table) {
        if (row.access.kind === 'none') continue;
        assert.ok(MODULES.includes(row.access.module as never) || row.access.module === null, `${row.method} ${row.path}`);
        assert.ok(['view', 'planner'].includes(row.access.level), `${row.method} ${row.path}`);
        if (row.access.kind === 'token')
          assert.ok(row.access.scope === null || SCOPES.includes(row.access.scope), `${row.method} ${row.path}`);
      }
      const tokens = table.filter((r) => r.path.includes('/tokens'));
      assert.deepEqual(tokens.map((r) => `${r.method} ${r.path} ${r.access.kind}`).sort(), [
        'DELETE /:tenant/api/v1/tokens/:id token',
        'GET /:tenant/api/v1/tokens token',
        'POST /:tenant/api/v1/tokens token',
        'POST /:tenant/api/v1/tokens/create none',
        'POST /:tenant/api/v1/tokens/provision token',
      ]);
    });

    it('gate (a): every route with a token of each scope', async () => {
      const tokens = new Map<string, string>();
      for (const scope of SCOPES) tokens.set(scope, await tokenFor('admin@demo.test', [scope]));
      await Promise.all(
        gated.map(async (row) => {
          for (const scope of SCOPES) {
            const required = row.access.kind === 'token' ? row.access.scope : null;
            const allowed = required === null || scope === '*' || scope === required;
            const res = await call(row, tokens.get(scope)!);
            const where = `${row.method} ${row.path} with ${scope}`;
            if (allowed) {
              assert.notEqual(res.status, 401, where);
              assert.ok(!GATE_SLUGS.includes(res.body?.type), `${where}: ${res.text}`);
            } else {
              assert.equal(res.status, 403, where);
              assert.equal(res.body.type, '/problems/insufficient-scope', where);
              assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
            }
          }
        }),
      );
    });

    it('gate (b): every route with a `*` token whose creator holds each level on each module', async () => {
      const cases = await Promise.all(
        MODULES.flatMap((module) =>
          LEVELS.map(async (level) => {
            const email = `walk.${module}.${level}@demo.test`;
            const levels = { ...everyModule('planner'), [module]: level } as Record<string, Level>;
            // Created while Planner everywhere, then lowered: the token's reach follows its creator.
            await createUser(email, everyModule('planner'));
            const token = await tokenFor(email, ['*']);
            await setUser(email, { levels });
            return { levels, token, label: `${module}=${level}` };
          }),
        ),
      );
      await Promise.all(
        gated.map(async (row) => {
          for (const c of cases) {
            const allowed = creatorMayCall(row.access as Exclude<Access, { kind: 'none' }>, c.levels);
            const res = await call(row, c.token);
            const where = `${row.method} ${row.path} by a creator with ${c.label}`;
            if (allowed) {
              assert.notEqual(res.status, 401, where);
              assert.ok(!GATE_SLUGS.includes(res.body?.type), `${where}: ${res.text}`);
            } else {
              assert.equal(res.status, 403, where);
              assert.equal(res.body.type, '/problems/insufficient-permission', where);
            }
          }
        }),
      );
    });
  });

  describe('authentication', () => {
    it("refuses the next request once the creator's level is lowered, and allows it again once raised", async () => {
      await createUser('lowered@demo.test', everyModule('planner'));
      const token = await tokenFor('lowered@demo.test', ['*']);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
      await setUser('lowered@demo.test', { levels: { master_data: 'none' } });
      const refused = await api(sys, '/demo/api/v1/uoms', { token });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.type, '/problems/insufficient-permission');
      await setUser('lowered@demo.test', { is_admin: true });
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200, 'admins pass every level check');
      await setUser('lowered@demo.test', { is_admin: false, levels: { master_data: 'view' } });
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
      await setUser('lowered@demo.test', { levels: { public_api: 'none' } });
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 403, 'no Public API access: nothing passes');
    });

    it("answers another tenant's token exactly like an unknown one", async () => {
      const acme = await tokenFor('admin@acme.test', ['*'], 'acme');
      assert.equal((await api(sys, '/acme/api/v1/uoms', { token: acme })).status, 200);
      const cross = await api(sys, '/demo/api/v1/uoms', { token: acme });
      const [id, secret] = acme.split('|');
      const unknown = await api(sys, '/demo/api/v1/uoms', { token: `${Number(id) + 100000}|${secret}` });
      assert.equal(cross.status, 401);
      assert.deepEqual(cross.body, { message: 'Unauthenticated.' });
      assert.deepEqual(unknown.body, cross.body);
    });

    it('answers 401 once a token expires', async () => {
      const admin = await tokenFor('planner@demo.test', ['*']);
      // Taken once the creating token is at hand: getting it may take a while on a loaded machine.
      const expiresAt = new Date(sys.config.now().getTime() + 1_500).toISOString();
      const created = await api(sys, '/demo/api/v1/tokens', {
        method: 'POST',
        token: admin,
        body: { name: 'short-lived', scopes: ['public_api.read'], expires_at: expiresAt },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.data[0].expires_at, expiresAt);
      const token = created.body.data[0].plain_text_token;
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
      await new Promise((r) => setTimeout(r, 1_600));
      const res = await api(sys, '/demo/api/v1/uoms', { token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { message: 'Unauthenticated.' });
    });

    it('answers 401 to every malformed variant', async () => {
      const good = await tokenFor('planner@demo.test', ['public_api.read']);
      const [id, secret] = good.split('|') as [string, string];
      const crcFlipped = secret.slice(0, -1) + (secret.endsWith('0') ? '1' : '0');
      const variants: Record<string, string> = {
        'no separator': `Bearer ${id}${secret}`,
        'bad id': `Bearer x${id}|${secret}`,
        'unknown id': `Bearer 99999999|${secret}`,
        'wrong prefix': `Bearer ${id}|tok_${secret.slice(4)}`,
        'bad CRC': `Bearer ${id}|${crcFlipped}`,
        'wrong secret, valid CRC': `Bearer ${id}|${(await tokenFor('planner@demo.test', ['public_api.read'])).split('|')[1]}`,
        // (HTTP strips spaces around a header value; these are inside it.)
        'extra space after Bearer': `Bearer  ${good}`,
        'space before the separator': `Bearer ${id} |${secret}`,
        'space inside the secret': `Bearer ${id}|${secret.slice(0, 20)} ${secret.slice(20)}`,
        'two tokens': `Bearer ${good} ${good}`,
        'no scheme': good,
        'Basic scheme': `Basic ${good}`,
        empty: 'Bearer ',
      };
      for (const [name, authorization] of Object.entries(variants)) {
        const res = await api(sys, '/demo/api/v1/uoms', { headers: { Authorization: authorization } });
        assert.equal(res.status, 401, name);
        assert.deepEqual(res.body, { message: 'Unauthenticated.' }, name);
      }
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: good })).status, 200);
    });

    it('redirects browsers to the login page and answers API clients with 401 JSON', async () => {
      const get = (headers: Record<string, string>) =>
        fetch(`${sys.baseUrl}/demo/api/v1/uoms`, { headers: { Authorization: 'Bearer nonsense', ...headers }, redirect: 'manual' });
      for (const headers of [{}, { Accept: 'text/html' }, { Accept: '*/*' }] as Array<Record<string, string>>) {
        const res = await get(headers);
        assert.equal(res.status, 302, JSON.stringify(headers));
        assert.equal(res.headers.get('location'), '/demo/login');
      }
      for (const headers of [{ Accept: 'application/json' }, { 'X-Requested-With': 'XMLHttpRequest' }] as Array<Record<string, string>>) {
        const res = await get(headers);
        assert.equal(res.status, 401, JSON.stringify(headers));
        assert.deepEqual(await bodyOf(res), { message: 'Unauthenticated.' });
      }
    });

    it('answers 403 when the workspace has the Public API module disabled', async () => {
      const token = await tokenFor('admin@closed.test', ['*'], 'closed');
      const res = await api(sys, '/closed/api/v1/uoms', { token });
      assert.equal(res.status, 403);
      assert.equal(res.body.type, '/problems/forbidden');
      assert.match(res.body.detail, /Public API module is disabled/);
    });
  });

  describe('token endpoints', () => {
    let planner: string;
    let viewer: string;
    before(async () => {
      planner = await tokenFor('planner@demo.test', ['*']);
      viewer = await tokenFor('viewer@demo.test', ['public_api.read']);
    });

    it('POST /tokens answers 201 with the one-element envelope holding plain_text_token', async () => {
      const res = await api(sys, '/demo/api/v1/tokens', {
        method: 'POST',
        token: planner,
        body: { name: 'ERP nightly', scopes: ['public_api.read', 'public_api.workflow'] },
      });
      assert.equal(res.status, 201);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.match(res.body.message, /created successfully/i);
      assert.match(res.body.message, /plain_text_token/);
      assert.match(res.body.message, /only once/);
      assert.deepEqual(res.body.meta, {});
      assert.equal(res.body.links, '/demo/api/v1/tokens');
      assert.equal(res.body.data.length, 1);
      const token = res.body.data[0];
      assert.equal(token.name, 'ERP nightly');
      assert.deepEqual(token.scopes, ['public_api.read', 'public_api.workflow']);
      assert.equal(token.expires_at, null);
      assert.equal(token.status, 'active');
      assert.equal(token.user_email, 'planner@demo.test');
      assert.match(token.plain_text_token, new RegExp(`^${token.id}\\|spl_[A-Za-z0-9]{40}[0-9a-f]{8}$`));
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: token.plain_text_token })).status, 200);
    });

    it('POST /tokens validates with the 422 field shape', async () => {
      const post = (body: unknown) => api(sys, '/demo/api/v1/tokens', { method: 'POST', token: planner, body });
      const empty = await post({});
      assert.equal(empty.status, 422);
      assert.deepEqual(empty.body, {
        message: 'The name field is required. (and 1 more error)',
        errors: { name: ['The name field is required.'], scopes: ['The scopes field is required.'] },
      });
      const bad = await post({
        name: 'x'.repeat(256),
        scopes: ['public_api.read', 'public_api.everything'],
        expires_at: '2020-01-01T00:00:00Z',
      });
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.body.errors, {
        name: ['The name field must not be greater than 255 characters.'],
        'scopes.1': ['The selected scopes.1 is invalid.'],
        expires_at: ['The expires at field must be a date after now.'],
      });
      assert.equal(bad.body.message, 'The name field must not be greater than 255 characters. (and 2 more errors)');
      assert.deepEqual((await post({ name: 'n', scopes: [] })).body.errors, { scopes: ['The scopes field is required.'] });
      assert.deepEqual((await post({ name: 'n', scopes: ['*'], expires_at: 'soon' })).body.errors, {
        expires_at: ['The expires at field must be a valid date.'],
      });
    });

    it('refuses a privileged scope to a View Only user with 403 before creating anything', async () => {
      const count = async () => (await api(sys, '/demo/api/v1/tokens?per_page=100', { token: viewer })).body.meta.pagination.total;
      const before = await count();
      for (const scopes of [['public_api.write'], ['*'], ['public_api.read', 'public_api.compute']]) {
        const res = await api(sys, '/demo/api/v1/tokens', { method: 'POST', token: viewer, body: { name: 'escalate', scopes } });
        assert.equal(res.status, 403, scopes.join());
        assert.equal(res.body.type, '/problems/insufficient-permission');
      }
      assert.equal(await count(), before);
      const read = await api(sys, '/demo/api/v1/tokens', {
        method: 'POST',
        token: viewer,
        body: { name: 'reader', scopes: ['public_api.read'] },
      });
      assert.equal(read.status, 201);
      assert.equal(await count(), before + 1);
    });

    it('POST /tokens/provision never exceeds the calling token', async () => {
      const callerExpiry = new Date(sys.config.now().getTime() + 86_400_000).toISOString();
      const callerRes = await api(sys, '/demo/api/v1/tokens', {
        method: 'POST',
        token: planner,
        body: { name: 'caller', scopes: ['public_api.read', 'public_api.workflow'], expires_at: callerExpiry },
      });
      const caller = callerRes.body.data[0].plain_text_token;
      const provision = (body: Record<string, unknown>) =>
        api(sys, '/demo/api/v1/tokens/provision', { method: 'POST', token: caller, body });

      for (const scopes of [['public_api.write'], ['*'], ['public_api.workflow.replace'], ['public_api.read', 'public_api.compute']]) {
        const res = await provision({ name: 'wider', scopes, expires_at: callerExpiry });
        assert.equal(res.status, 403, scopes.join());
        assert.equal(res.body.type, '/problems/insufficient-scope');
      }
      const later = await provision({
        name: 'longer',
        scopes: ['public_api.read'],
        expires_at: new Date(Date.parse(callerExpiry) + 1000).toISOString(),
      });
      assert.equal(later.status, 403);
      const never = await provision({ name: 'forever', scopes: ['public_api.read'] });
      assert.equal(never.status, 403);
      assert.match(never.body.detail, /no later than the calling token/);

      const ok = await provision({ name: 'narrower', scopes: ['public_api.read'], expires_at: callerExpiry });
      assert.equal(ok.status, 201);
      assert.equal(ok.body.data.length, 1);
      assert.deepEqual(ok.body.data[0].scopes, ['public_api.read']);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: ok.body.data[0].plain_text_token })).status, 200);

      const star = await api(sys, '/demo/api/v1/tokens/provision', {
        method: 'POST',
        token: planner,
        body: { name: 'from star', scopes: ['public_api.write', 'public_api.workflow.replace'] },
      });
      assert.equal(star.status, 201, '`*` covers every scope');
    });

    it("GET /tokens lists the caller's own tokens, and every token of the workspace for admins", async () => {
      const admin = await tokenFor('admin@demo.test', ['public_api.read']);
      const mine = await api(sys, '/demo/api/v1/tokens?per_page=100', { token: viewer });
      assert.equal(mine.status, 200);
      assert.ok(mine.body.data.length > 0);
      assert.ok(mine.body.data.every((t: { user_email: string }) => t.user_email === 'viewer@demo.test'));
      assert.ok(mine.body.data.every((t: Record<string, unknown>) => !('plain_text_token' in t) && !('secret_sha256' in t)));
      assert.deepEqual(Object.keys(mine.body.meta.pagination).sort(), ['current_page', 'last_page', 'per_page', 'result_count', 'total']);
      const all = await api(sys, '/demo/api/v1/tokens?per_page=100', { token: admin });
      const creators = new Set(all.body.data.map((t: { user_email: string }) => t.user_email));
      assert.ok(creators.has('viewer@demo.test') && creators.has('planner@demo.test'));
      const page2 = await api(sys, '/demo/api/v1/tokens?per_page=1&page=2', { token: admin });
      assert.equal(page2.body.data.length, 1);
      assert.equal(page2.body.data[0].id, all.body.data[1].id, 'newest first');
      assert.equal((await api(sys, '/demo/api/v1/tokens?per_page=101', { token: admin })).status, 422);
    });

    it('DELETE /tokens/{id}: the creator or an admin revokes, the next request is 401, others see 404', async () => {
      const victim = await tokenFor('planner@demo.test', ['public_api.read']);
      const id = victim.split('|')[0];
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: victim })).status, 200);

      const stranger = await api(sys, `/demo/api/v1/tokens/${id}`, {
        method: 'DELETE',
        token: await tokenFor('nodemand@demo.test', ['*']),
      });
      assert.equal(stranger.status, 404);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: victim })).status, 200);

      const revoked = await api(sys, `/demo/api/v1/tokens/${id}`, { method: 'DELETE', token: planner });
      assert.equal(revoked.status, 204);
      assert.equal(revoked.text, '');
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: victim })).status, 401);
      assert.equal((await api(sys, `/demo/api/v1/tokens/${id}`, { method: 'DELETE', token: planner })).status, 204, 'idempotent');

      const other = await tokenFor('viewer@demo.test', ['public_api.read']);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: other })).status, 200);
      const byAdmin = await api(sys, `/demo/api/v1/tokens/${other.split('|')[0]}`, {
        method: 'DELETE',
        token: await tokenFor('admin@demo.test', ['public_api.read']),
      });
      assert.equal(byAdmin.status, 204);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: other })).status, 401);

      assert.equal((await api(sys, '/demo/api/v1/tokens/99999999', { method: 'DELETE', token: planner })).status, 404);
      const listed = await api(sys, '/demo/api/v1/tokens?per_page=100', { token: planner });
      assert.equal(listed.body.data.find((t: { id: number }) => t.id === Number(id)).status, 'revoked');
    });

    it('a revocation outside the gateway (operator) reaches the gateway before the next request', async () => {
      const token = await tokenFor('planner@demo.test', ['public_api.read']);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
      await sys.clients.tokens.revokeToken({ actor: { user_id: 0, operator: true }, id: Number(token.split('|')[0]) }, asTenant('demo'));
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 401);
    });
  });

  describe('legacy POST /tokens/create', () => {
    const exchange = (body: string | Record<string, string>, contentType = 'application/json') =>
      fetch(`${sys.baseUrl}/demo/api/v1/tokens/create`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': contentType },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const assertLegacyHeaders = (res: Response) => {
      assert.equal(res.headers.get('sunset'), 'Fri, 01 Jan 2027 00:00:00 GMT');
      assert.match(res.headers.get('deprecation') ?? '', /^@\d+$/);
    };

    it('exchanges email and password (JSON or form) for a `*` token', async () => {
      const json = await exchange({ email: 'planner@demo.test', password: PASSWORD });
      assert.equal(json.status, 200);
      assertLegacyHeaders(json);
      const body = await bodyOf(json);
      assert.deepEqual(Object.keys(body), ['token']);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token: body.token })).status, 200);
      const listed = await api(sys, '/demo/api/v1/tokens?per_page=1', { token: body.token });
      assert.deepEqual(listed.body.data[0].scopes, ['*']);

      const form = await exchange(
        `email=${encodeURIComponent('Planner@demo.test')}&password=${PASSWORD}`,
        'application/x-www-form-urlencoded',
      );
      assert.equal(form.status, 200);
      assertLegacyHeaders(form);
      assert.match((await bodyOf(form)).token, /^\d+\|spl_/);
    });

    it("holds a legacy `*` token to its creator's levels", async () => {
      const res = await exchange({ email: 'viewer@demo.test', password: PASSWORD });
      const { token } = await bodyOf(res);
      assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
      const write = await api(sys, '/demo/api/v1/tokens', { method: 'POST', token, body: { name: 'x', scopes: ['public_api.write'] } });
      assert.equal(write.status, 403);
    });

    it('answers wrong credentials with 401 Invalid credentials, and missing fields with the legacy 422', async () => {
      for (const body of [
        { email: 'planner@demo.test', password: 'wrong-password' },
        { email: 'nobody@demo.test', password: PASSWORD },
      ]) {
        const res = await exchange(body);
        assert.equal(res.status, 401);
        assertLegacyHeaders(res);
        assert.deepEqual(await bodyOf(res), { message: 'Invalid credentials.' });
      }
      const acmeUser = await exchange({ email: 'admin@acme.test', password: PASSWORD });
      assert.equal(acmeUser.status, 401, "another tenant's user is unknown here");
      const missing = await exchange({});
      assert.equal(missing.status, 422);
      assertLegacyHeaders(missing);
      const body = await bodyOf(missing);
      assert.equal(body.success, false);
      assert.deepEqual(Object.keys(body.errors).sort(), ['email', 'password']);
    });

    it('allows 5 failed attempts per email per minute, then answers 429 even to the right password', async () => {
      await createUser('brute@demo.test', everyModule('planner'));
      for (let i = 0; i < 5; i++) assert.equal((await exchange({ email: 'brute@demo.test', password: `guess-${i}` })).status, 401);
      const limited = await exchange({ email: 'brute@demo.test', password: PASSWORD });
      assert.equal(limited.status, 429);
      assertLegacyHeaders(limited);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal((await exchange({ email: 'BRUTE@demo.test', password: PASSWORD })).status, 429, 'the email is case-insensitive');
      assert.equal((await exchange({ email: 'planner@demo.test', password: PASSWORD })).status, 200, 'other emails are unaffected');
    });

    it('refuses a workspace whose Public API module is disabled, once the credentials are right', async () => {
      const res = await fetch(`${sys.baseUrl}/closed/api/v1/tokens/create`, {
        method: 'POST',
        headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'admin@closed.test', password: PASSWORD }),
      });
      assert.equal(res.status, 403);
    });
  });
});

describe('identity: the legacy exchange after its sunset', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  before(async () => {
    sys = await startSystem({ env: { CLOCK_NOW: '2027-01-01T00:00:00Z' } });
  });
  after(() => sys?.stop());

  it('answers 410 with the deprecation headers from 2027-01-01', async () => {
    const res = await fetch(`${sys.baseUrl}/demo/api/v1/tokens/create`, {
      method: 'POST',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'planner@demo.test', password: PASSWORD }),
    });
    assert.equal(res.status, 410);
    assert.equal(res.headers.get('sunset'), 'Fri, 01 Jan 2027 00:00:00 GMT');
    assert.ok(res.headers.get('deprecation'));
    const gone = await bodyOf(res);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.match(gone.detail, /removed on 2027-01-01/);
    const token = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200, 'current tokens keep working');
  });
});
