import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { runAdmin as main } from '@supply/tokens';
import { api, startSystem, type TestSystem } from '../support/system';

const CLI = 'services/tokens/src/cli/admin.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('identity: operator CLI against a running system', function () {
  this.timeout(90_000);
  let sys: TestSystem;
  let env: Record<string, string>;

  /** `npx tsx services/tokens/src/cli/admin.ts ...` with the server's environment and nothing else. */
  const spawnAdmin = (args: string[], extraEnv: Record<string, string> = {}): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn('npx', ['tsx', CLI, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b) => (stdout += b));
      child.stderr.on('data', (b) => (stderr += b));
      child.on('error', reject);
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
  /** The same commands in this process (spawning each costs a second of start-up). */
  const admin = async (...args: string[]): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const code = await main(args, { env, stdout: (l) => (stdout += `${l}\n`), stderr: (l) => (stderr += `${l}\n`) });
    return { code, stdout, stderr };
  };
  const ok = async (...args: string[]) => {
    const run = await admin(...args);
    assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
    return run.stdout;
  };

  before(async () => {
    sys = await startSystem();
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: sys.dataDir,
      GRPC_BASE_PORT: String(sys.config.GRPC_BASE_PORT),
      LOG_LEVEL: 'silent',
    };
  });
  after(() => sys?.stop());

  it('creates a tenant and a user, issues a token on stdout alone, lists and revokes it', async () => {
    assert.match(await ok('tenant', 'create', 'globex', '--name', 'Globex'), /Created tenant globex "Globex": Public API on/);
    assert.match(
      await ok(
        'user',
        'create',
        'globex',
        'Ops@Globex.test',
        '--password',
        'globex-password-1',
        '--level',
        'public_api=planner',
        '--level',
        'master_data=view',
      ),
      /Created user ops@globex\.test in globex: public_api=planner master_data=view demand=none/,
    );

    const created = await spawnAdmin([
      'token',
      'create',
      'globex',
      'ops@globex.test',
      '--name',
      'nightly',
      '--scopes',
      'public_api.read,public_api.write',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    assert.match(created.stdout, /^\d+\|spl_[A-Za-z0-9]{40}[0-9a-f]{8}\n$/, 'stdout is the token and nothing else');
    const read = await api(sys, '/globex/api/v1/uoms', { token });
    assert.notEqual(read.status, 401);
    assert.notEqual(read.status, 403);

    const list = await ok('token', 'list', 'globex', '--email', 'ops@globex.test');
    assert.match(list, /^ID\s+NAME\s+SCOPES\s+STATUS/);
    assert.match(
      list,
      new RegExp(
        `^${token.split('|')[0]}\\s+nightly\\s+public_api.read,public_api.write\\s+active\\s+never\\s+\\S+\\s+ops@globex.test$`,
        'm',
      ),
    );
    assert.ok(!list.includes(token.split('|')[1]!), 'the list never shows a secret');

    assert.match(await ok('token', 'revoke', 'globex', token.split('|')[0]!), /Revoked token \d+ "nightly" of ops@globex\.test/);
    assert.equal((await api(sys, '/globex/api/v1/uoms', { token })).status, 401, 'revoked on the very next request');
    assert.match(await ok('token', 'list', 'globex'), /nightly\s+\S+\s+revoked/);
  });

  it('changes levels and the admin flag; the next request sees it', async () => {
    const token = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
    assert.match(await ok('user', 'set', 'demo', 'planner@demo.test', '--level', 'master_data=none'), /master_data=none/);
    assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 403);
    assert.match(await ok('user', 'set', 'demo', 'planner@demo.test', '--admin', 'on'), /\(workspace admin\)/);
    assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
    await ok('user', 'set', 'demo', 'planner@demo.test', '--admin', 'off', '--level', 'master_data=planner');
    assert.equal((await api(sys, '/demo/api/v1/uoms', { token })).status, 200);
  });

  it('disables and enables the Public API module of a tenant, and sets its limits', async () => {
    const token = await sys.tokenFor('acme', 'admin@acme.test', ['public_api.read']);
    assert.equal((await api(sys, '/acme/api/v1/uoms', { token })).status, 200);
    assert.match(await ok('tenant', 'set', 'acme', '--public-api', 'off'), /Public API off/);
    assert.equal((await api(sys, '/acme/api/v1/uoms', { token })).status, 403);
    assert.equal((await fetch(`${sys.baseUrl}/acme/login`)).status, 404);
    assert.match(await ok('tenant', 'set', 'acme', '--public-api', 'on'), /Public API on/);
    assert.equal((await api(sys, '/acme/api/v1/uoms', { token })).status, 200);

    assert.match(await ok('limits', 'set', 'acme', '--rate', '300', '--credits', '5000'), /rate 300 per 60 s; 5000 credits a month/);
    const tenant = await sys.clients.tokens.getTenant({ slug: 'acme' });
    assert.equal(tenant.rate_limit, 300);
    assert.equal(tenant.monthly_credits, 5000);
  });

  it('explains failures and exits non-zero', async () => {
    const usage = await spawnAdmin(['token', 'create', 'demo', 'planner@demo.test', '--scopes', '*']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--name is required/);
    assert.equal(usage.stdout, '');

    const unknownCommand = await admin('tenant', 'destroy', 'demo');
    assert.equal(unknownCommand.code, 2);
    assert.match(unknownCommand.stderr, /unknown command: tenant destroy/);

    const noTenant = await admin('user', 'create', 'nowhere', 'a@b.test', '--password', 'long-enough-1');
    assert.equal(noTenant.code, 1);
    assert.match(noTenant.stderr, /No tenant nowhere/);

    const badScope = await admin('token', 'create', 'demo', 'planner@demo.test', '--name', 'x', '--scopes', 'public_api.read,everything');
    assert.equal(badScope.code, 1);
    assert.match(badScope.stderr, /scopes\.1: The selected scopes\.1 is invalid\./);
    assert.equal(badScope.stdout, '');

    const privileged = await admin('token', 'create', 'demo', 'viewer@demo.test', '--name', 'x', '--scopes', 'public_api.write');
    assert.equal(privileged.code, 1);
    assert.match(privileged.stderr, /Only Planner/);

    const badLevel = await admin('user', 'set', 'demo', 'viewer@demo.test', '--level', 'demand=owner');
    assert.equal(badLevel.code, 1);
    assert.match(badLevel.stderr, /Unknown level owner/);

    const duplicate = await admin('tenant', 'create', 'demo');
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /already exists/);

    const refused = await spawnAdmin(['token', 'revoke', 'demo', '99999999']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /No token 99999999/);

    const unreachable = await spawnAdmin(['tenant', 'show', 'demo'], { GRPC_BASE_PORT: '1' });
    assert.equal(unreachable.code, 3);
    assert.match(unreachable.stderr, /not reachable/);
  });
});
