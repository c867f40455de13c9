import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { api, startSystem, type TestSystem } from '../support/system';
import { waitForJob } from './workflows-support';

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The files under `dir` whose bytes contain `text`. */
function filesContaining(dir: string, text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return filesUnder(dir).filter((file) => readFileSync(file).includes(needle));
}

describe('Idempotency-Key on the POSTs the gateway answers itself', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let writer: string;
  let acmeWriter: string;
  let run = 0;

  before(async () => {
    sys = await startSystem();
  });
  // Rate limits count per token: each test writes with tokens of its own.
  beforeEach(async () => {
    run++;
    writer = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read', 'public_api.write']);
    acmeWriter = await sys.tokenFor('acme', 'admin@acme.test', ['*']);
  });
  after(() => sys?.stop());

  const post = (path: string, body: unknown, key: string | null, token = writer, tenant = 'demo') =>
    api(sys, `/${tenant}/api/v1/${path}`, { method: 'POST', token, body, headers: key === null ? {} : { 'Idempotency-Key': key } });
  const total = async (path: string, token = writer, tenant = 'demo') => {
    const res = await api(sys, `/${tenant}/api/v1/${path}?per_page=1`, { token });
    assert.equal(res.status, 200, res.text);
    return res.body.meta.pagination.total as number;
  };

  describe('a reference write (POST /uoms)', () => {
    it('replays the first answer for the same key and body, creates once and spends credits once', async () => {
      const before = await total('uoms');
      const key = `uom-once-${run}`;
      const first = await post('uoms', { name: `Crate ${run}`, abbreviation: `cr${run}` }, key);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);

      // The same JSON with its keys in another order is the same request.
      const again = await post('uoms', { abbreviation: `cr${run}`, name: `Crate ${run}` }, key);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
      assert.ok(again.headers.get('ratelimit'), 'a replay is metered: it has its own RateLimit');
      assert.notEqual(again.headers.get('x-request-id'), first.headers.get('x-request-id'), 'and its own request id');
      assert.equal(again.headers.get('credits-remaining'), first.headers.get('credits-remaining'), 'a replay spends no credits');

      assert.equal(await total('uoms'), before + 1, 'created once');
    });

    it('answers 422 on Idempotency-Key for the same key with another body, or on another endpoint', async () => {
      const key = `uom-other-${run}`;
      assert.equal((await post('uoms', { name: `Bag ${run}`, abbreviation: `bg${run}` }, key)).status, 201);
      const before = await total('uoms');
      const other = await post('uoms', { name: `Sack ${run}`, abbreviation: `sk${run}` }, key);
      assert.equal(other.status, 422, other.text);
      assert.ok(other.body.errors['Idempotency-Key'], other.text);
      const elsewhere = await post('customer-groups', { name: `Group ${run}` }, key);
      assert.equal(elsewhere.status, 422, elsewhere.text);
      assert.ok(elsewhere.body.errors['Idempotency-Key'], 'a key names one request, whatever endpoint it went to');
      // Compute keeps its keys in the same place (through the workflows RPCs).
      const planner = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
      const plan = await post('supply-plans/generate', { mode: 'standard', item_location_id: 1 }, key, planner);
      assert.equal(plan.status, 422, plan.text.slice(0, 300));
      assert.ok(plan.body.errors['Idempotency-Key'], plan.text);
      assert.equal(await total('uoms'), before);
    });

    it('does the work once under many parallel identical requests: one 201, the rest replays or 409', async () => {
      const before = await total('uoms');
      const key = `uom-race-${run}`;
      const body = { name: `Drum ${run}`, abbreviation: `dr${run}` };
      const answers = await Promise.all(Array.from({ length: 12 }, () => post('uoms', body, key)));
      const firsts = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
      const replays = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === 'true');
      const conflicts = answers.filter((a) => a.status === 409);
      assert.equal(firsts.length, 1, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
      assert.equal(firsts.length + replays.length + conflicts.length, answers.length, answers.map((a) => a.status).join(','));
      for (const c of conflicts) assert.equal(c.headers.get('content-type')?.split(';')[0], 'application/problem+json');
      for (const r of replays) assert.deepEqual(r.body, firsts[0]!.body);
      assert.equal(await total('uoms'), before + 1);
      // Once answered, the key replays.
      const later = await post('uoms', body, key);
      assert.equal(later.headers.get('idempotent-replayed'), 'true');
    });

    it('answers 409 while the first request with the key is unanswered, and spends nothing', async () => {
      const key = `uom-held-${run}`;
      // Keys are the user's: the claim acts for the writer's user, as the gateway would.
      const p = await sys.clients.tokens.authenticate({ token: writer }, { context: { requestId: 'test', tenant: 'demo' } });
      const principal = { tenant: 'demo', tokenId: p.token_id, userId: p.user_id, scopes: p.scopes, isAdmin: p.is_admin };
      const asDemo = { context: { requestId: 'test', tenant: 'demo', principal } };
      // Another gateway replica's request, claimed and still at work.
      const held = await sys.clients.workflows.claimIdempotencyKey({ key, fingerprint: 'a-request-in-flight' }, asDemo);
      const body = { name: `Keg ${run}`, abbreviation: `kg${run}` };
      const busy = await post('uoms', body, key);
      assert.equal(busy.status, 409, busy.text);
      assert.equal(busy.body.type, '/problems/conflict', busy.text);
      assert.equal(busy.headers.get('credits-remaining'), null, 'refused before metering');
      await sys.clients.workflows.releaseIdempotencyKey({ key, claim_id: held.claim_id }, asDemo);
      const free = await post('uoms', body, key);
      assert.equal(free.status, 201, free.text);
    });

    it('frees the key of a first request that failed (422), so the client may retry with it', async () => {
      const key = `uom-failed-${run}`;
      const taken = await post('uoms', { name: 'Each', abbreviation: `ea${run}` }, key);
      assert.equal(taken.status, 422, taken.text);
      assert.ok(taken.body.errors.name, 'the reference service refused the name');
      const retried = await post('uoms', { name: 'Each', abbreviation: `ea${run}` }, key);
      assert.equal(retried.status, 422);
      assert.equal(retried.headers.get('idempotent-replayed'), null, 'failures are not kept');
      const fixed = await post('uoms', { name: `Each ${run}`, abbreviation: `ea${run}` }, key);
      assert.equal(fixed.status, 201, fixed.text);
      assert.equal(fixed.headers.get('idempotent-replayed'), null);
    });

    it('keeps keys per tenant: acme may use the key demo used', async () => {
      const key = `shared-${run}`;
      const body = { name: `Tote ${run}`, abbreviation: `tt${run}` };
      const demo = await post('uoms', body, key);
      assert.equal(demo.status, 201, demo.text);
      const before = await total('uoms', acmeWriter, 'acme');
      const acme = await post('uoms', body, key, acmeWriter, 'acme');
      assert.equal(acme.status, 201, acme.text);
      assert.equal(acme.headers.get('idempotent-replayed'), null);
      assert.notEqual(acme.body.data[0].id, demo.body.data[0].id);
      assert.equal(await total('uoms', acmeWriter, 'acme'), before + 1);
    });

    it('refuses a malformed key with 422 on Idempotency-Key; without the header nothing changes', async () => {
      for (const key of ['x'.repeat(256), 'two words', '']) {
        const res = await post('uoms', { name: `Bad ${run}`, abbreviation: `bd${run}` }, key);
        assert.equal(res.status, 422, `${JSON.stringify(key)}: ${res.text}`);
        assert.ok(res.body.errors['Idempotency-Key'], res.text);
      }
      assert.equal((await post('uoms', { name: `Long ${run}`, abbreviation: `lg${run}` }, 'k'.repeat(255))).status, 201);
      const plain = await post('uoms', { name: `Plain ${run}`, abbreviation: `pl${run}` }, null);
      assert.equal(plain.status, 201);
      assert.equal(plain.headers.get('idempotent-replayed'), null);
      assert.equal((await post('uoms', { name: `Plain ${run}`, abbreviation: `pl${run}` }, null)).status, 422, 'no key: a second create');
    });
  });

  describe('keys per user: another user of the tenant sending the same key and body gets an answer of its own', () => {
    /** A second planner of demo, with every module: whatever A may send, B may send too. */
    const userB = 'second-planner@demo.test';
    const asDemo = { context: { requestId: 'test', tenant: 'demo' } };
    before(async () => {
      const levels = {
        public_api: 'planner',
        master_data: 'planner',
        demand: 'planner',
        inventory: 'planner',
        supply: 'planner',
        finance: 'planner',
      };
      await sys.clients.tokens.createUser({ email: userB, password: 'second-password-1', is_admin: false, levels }, asDemo);
      await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000, monthly_credits: 100_000_000 }, asDemo);
    });
    const tokensOf = async (email: string) => [await sys.tokenFor('demo', email, ['*']), await sys.tokenFor('demo', email, ['*'])] as const;

    it("POST /tokens: B gets its own new token, never A's; A's other token replays A's", async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1] = await tokensOf(userB);
      const key = `token-per-user-${run}`;
      const body = { name: `per-user-${run}`, scopes: ['public_api.read'] };

      const first = await post('tokens', body, key, a1);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.data[0].user_email, 'planner@demo.test');

      const other = await post('tokens', body, key, b1);
      assert.equal(other.status, 201, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null, "not a replay of A's answer");
      assert.equal(other.body.data[0].user_email, userB);
      assert.notEqual(other.body.data[0].id, first.body.data[0].id);
      assert.match(other.body.data[0].plain_text_token, /^\d+\|spl_/, 'a token of its own, secret shown');

      const again = await post('tokens', body, key, a2);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true', "A's tokens share A's keys");
      assert.equal(again.body.data[0].id, first.body.data[0].id);
      // And B's key is B's: B's repeat replays B's answer.
      const bAgain = await post('tokens', body, key, b1);
      assert.equal(bAgain.headers.get('idempotent-replayed'), 'true');
      assert.equal(bAgain.body.data[0].id, other.body.data[0].id);
    });

    it("POST /uoms: B with A's key and body runs its own request (here a 422: the name is taken), no replay", async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1] = await tokensOf(userB);
      const key = `uom-per-user-${run}`;
      const body = { name: `Pallet ${run}`, abbreviation: `pa${run}` };
      const first = await post('uoms', body, key, a1);
      assert.equal(first.status, 201, first.text);
      const other = await post('uoms', body, key, b1);
      assert.equal(other.headers.get('idempotent-replayed'), null, other.text);
      assert.equal(other.status, 422, other.text);
      const again = await post('uoms', body, key, a2);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
    });

    it("POST /workflows/sync-sales (kept by the workflows service): B gets a job of its own, readable by B; A's other token replays A's job", async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1, b2] = await tokensOf(userB);
      const key = `sync-per-user-${run}`;
      const body = {
        data: [
          {
            sale_type_name: 'History',
            item_name: 'SKU-0001',
            customer_group_name: 'Retail',
            sell_date: `${2200 + run}-01-01`,
            timing_interval: 'day',
            quantity: 1,
            uom: 'ea',
          },
        ],
      };
      const first = await post('workflows/sync-sales', body, key, a1);
      assert.equal(first.status, 202, first.text);
      const jobA: number = first.body.data[0].job_id;

      const other = await post('workflows/sync-sales', body, key, b1);
      assert.equal(other.status, 202, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null, "not a replay of A's job");
      const jobB: number = other.body.data[0].job_id;
      assert.notEqual(jobB, jobA);
      assert.equal((await api(sys, `/demo/api/v1/jobs/${jobB}`, { token: b2 })).status, 200, "B's job is B's");
      assert.equal((await api(sys, `/demo/api/v1/jobs/${jobA}`, { token: b2 })).status, 404, "A's job stays A's");

      const again = await post('workflows/sync-sales', body, key, a2);
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.data[0].job_id, jobA);
    });

    it("POST /supply-plans/generate (compute, through the workflows RPCs): B runs its own plan; A's other token replays", async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1] = await tokensOf(userB);
      const key = `plan-per-user-${run}`;
      const body = { mode: 'standard', item_location_id: 1 };
      const first = await post('supply-plans/generate', body, key, a1);
      assert.equal(first.status, 200, first.text.slice(0, 300));
      const other = await post('supply-plans/generate', body, key, b1);
      assert.equal(other.status, 200, other.text.slice(0, 300));
      assert.equal(other.headers.get('idempotent-replayed'), null, "not a replay of A's plan");
      assert.notEqual(other.body.meta.plan_run_id, first.body.meta.plan_run_id, 'a run of its own');
      const again = await post('supply-plans/generate', body, key, a2);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.meta.plan_run_id, first.body.meta.plan_run_id);
    });

    it("POST /forecasts/generate (compute, key kept by the service): B gets a job of its own, readable by B; A's other token replays A's job", async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1, b2] = await tokensOf(userB);
      const key = `forecast-per-user-${run}`;
      const body = { item_name: 'SKU-0003', customer_group_name: 'Retail', forecast_periods: 2 };
      const first = await post('forecasts/generate', body, key, a1);
      assert.equal(first.status, 202, first.text);
      const jobA: number = first.body.data[0].job_id;

      // While A's run is in progress, B's request is B's own: it meets the one-run-at-a-time rule (503), not A's answer.
      const early = await post('forecasts/generate', body, key, b1);
      assert.equal(early.headers.get('idempotent-replayed'), null, "not a replay of A's job");
      assert.ok(early.status === 503 || early.status === 202, early.text);
      if (early.status === 503) await waitForJob(sys, 'demo', a2, jobA);
      // B's failed first try freed B's key; the same key then starts B's own run.
      const other = early.status === 202 ? early : await post('forecasts/generate', body, key, b1);
      assert.equal(other.status, 202, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null, "not a replay of A's job");
      const jobB: number = other.body.data[0].job_id;
      assert.notEqual(jobB, jobA);
      assert.equal((await api(sys, `/demo/api/v1/jobs/${jobB}`, { token: b2 })).status, 200, "B's job is B's");
      assert.equal((await api(sys, `/demo/api/v1/jobs/${jobA}`, { token: b2 })).status, 404, "A's job stays A's");

      const again = await post('forecasts/generate', body, key, a2);
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true', "A's tokens share A's keys");
      assert.equal(again.body.data[0].job_id, jobA);
      const bAgain = await post('forecasts/generate', body, key, b2);
      assert.equal(bAgain.headers.get('idempotent-replayed'), 'true', "B's key is B's");
      assert.equal(bAgain.body.data[0].job_id, jobB);
    });

    it("legacy POST /sales (JSON load, key kept by the workflows service): B gets a job_log_id of its own; A's other token replays A's", async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1, b2] = await tokensOf(userB);
      const key = `legacy-load-per-user-${run}`;
      const body = {
        arguments: { allow_record_creation: true, allow_record_update: true, should_continue_on_error: true },
        payload: [
          {
            sale_type_name: 'History',
            item_name: 'SKU-0001',
            customer_group_name: 'Retail',
            sell_date: `${2400 + run}-01-01`,
            timing_interval: 'day',
            quantity: 3,
            uom: 'ea',
          },
        ],
      };
      const first = await post('sales', body, key, a1);
      assert.equal(first.status, 200, first.text);
      const jobA: number = first.body.job_log_id;

      const other = await post('sales', body, key, b1);
      assert.equal(other.status, 200, other.text);
      assert.equal(other.headers.get('idempotent-replayed'), null, "not a replay of A's load");
      const jobB: number = other.body.job_log_id;
      assert.notEqual(jobB, jobA);
      assert.equal((await api(sys, `/demo/api/v1/jobs/${jobB}`, { token: b2 })).status, 200, "B's job is B's");
      assert.equal((await api(sys, `/demo/api/v1/jobs/${jobA}`, { token: b2 })).status, 404, "A's job stays A's");

      const again = await post('sales', body, key, a2);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true', "A's tokens share A's keys");
      assert.deepEqual(again.body, first.body);
      const bAgain = await post('sales', body, key, b2);
      assert.equal(bAgain.headers.get('idempotent-replayed'), 'true', "B's key is B's");
      assert.equal(bAgain.body.job_log_id, jobB);
    });

    it('a file import: B with the same key and file gets its own job', async () => {
      const [a1, a2] = await tokensOf('planner@demo.test');
      const [b1] = await tokensOf(userB);
      const key = `import-per-user-${run}`;
      const csv = `sale_type_name,item_name,customer_group_name,sell_date,timing_interval,quantity,uom\nHistory,SKU-0001,Retail,${2300 + run}-01-01,day,2,ea\n`;
      const send = async (token: string) => {
        const form = new FormData();
        form.append('file', new Blob([csv], { type: 'text/csv' }), 'load.csv');
        const res = await fetch(`${sys.baseUrl}/demo/api/v1/workflows/sync-sales/import`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Idempotency-Key': key },
          body: form,
        });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as any };
      };
      const first = await send(a1);
      assert.equal(first.status, 202, JSON.stringify(first.body));
      const other = await send(b1);
      assert.equal(other.status, 202, JSON.stringify(other.body));
      assert.equal(other.replayed, null);
      assert.notEqual(other.body.data[0].job_id, first.body.data[0].job_id);
      const again = await send(a2);
      assert.equal(again.replayed, 'true');
      assert.equal(again.body.data[0].job_id, first.body.data[0].job_id);
    });
  });

  describe('token creation (POST /tokens, /tokens/provision)', () => {
    const tokenCount = async (token: string) =>
      (await api(sys, '/demo/api/v1/tokens?per_page=1', { token })).body.meta.pagination.total as number;

    it('replays a creation without the secret, creates once, and keeps no plaintext token at rest', async () => {
      const caller = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
      const before = await tokenCount(caller);
      const name = `idempotent-token-${run}-${Date.now()}`;
      const body = { name, scopes: ['public_api.read'] };
      const key = `token-once-${run}`;

      const first = await post('tokens', body, key, caller);
      assert.equal(first.status, 201, first.text);
      const secret: string = first.body.data[0].plain_text_token;
      assert.match(secret, /^\d+\|spl_/);

      const again = await post('tokens', body, key, caller);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.headers.get('cache-control'), 'no-store');
      assert.equal(again.body.data[0].plain_text_token, undefined, 'the secret is shown once');
      assert.match(again.body.message, /first request.*shown once/i);
      const { plain_text_token: _, ...fields } = first.body.data[0];
      assert.deepEqual(again.body.data[0], fields, 'the same token');
      assert.equal(await tokenCount(caller), before + 1, 'created once');

      const other = await post('tokens', { ...body, scopes: ['*'] }, key, caller);
      assert.equal(other.status, 422, other.text);
      assert.ok(other.body.errors['Idempotency-Key']);

      // Provisioning replays the same way.
      const provisionKey = `provision-once-${run}`;
      const provisioned = await post('tokens/provision', { name: `${name}-child`, scopes: ['public_api.read'] }, provisionKey, caller);
      assert.equal(provisioned.status, 201, provisioned.text);
      const childSecret: string = provisioned.body.data[0].plain_text_token;
      const reprovisioned = await post('tokens/provision', { name: `${name}-child`, scopes: ['public_api.read'] }, provisionKey, caller);
      assert.equal(reprovisioned.status, 201, reprovisioned.text);
      assert.equal(reprovisioned.headers.get('idempotent-replayed'), 'true');
      assert.equal(reprovisioned.body.data[0].plain_text_token, undefined);
      assert.equal(reprovisioned.body.data[0].id, provisioned.body.data[0].id);
      assert.equal(await tokenCount(caller), before + 2);

      // The kept answers are in the workflows store (the scan finds what is there) but no secret is, anywhere.
      assert.ok(filesContaining(join(sys.dataDir, 'workflows'), name).length > 0, 'the kept answer is under DATA_DIR/workflows');
      for (const plain of [secret, childSecret]) {
        assert.deepEqual(filesContaining(sys.dataDir, plain.split('|')[1]!), [], 'no plaintext token at rest');
      }
    });

    it('without a key, each POST /tokens creates a token as before', async () => {
      const caller = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
      const before = await tokenCount(caller);
      const body = { name: `plain-token-${run}`, scopes: ['public_api.read'] };
      const a = await post('tokens', body, null, caller);
      const b = await post('tokens', body, null, caller);
      assert.equal(a.status, 201);
      assert.equal(b.status, 201);
      assert.notEqual(a.body.data[0].id, b.body.data[0].id);
      assert.ok(b.body.data[0].plain_text_token);
      assert.equal(await tokenCount(caller), before + 2);
    });
  });
});
