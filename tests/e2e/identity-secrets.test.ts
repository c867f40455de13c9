import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashSecret } from '@supply/contracts';
import { freePortRange } from '../support/ports';

const PASSWORD = 'demo-password-123';
const CLI_PASSWORD = 'operator-chosen-Pa55word';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * Runs `npm start` as a separate process with trace logging, drives every path that sees a
 * secret (page login, legacy exchange, token creation, CLI user creation, failed attempts),
 * then searches its logs and every byte under DATA_DIR for any of them.
 */
describe('identity: no plaintext token or password at rest or in logs', function () {
  this.timeout(90_000);
  let dataDir: string;
  let server: ChildProcess;
  let logs = '';
  let baseUrl: string;
  let env: Record<string, string>;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'supply-secrets-'));
    const base = await freePortRange(6);
    baseUrl = `http://127.0.0.1:${base + 5}`;
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: dataDir,
      GRPC_BASE_PORT: String(base),
      PORT: String(base + 5),
      LOG_LEVEL: 'trace',
    };
    server = spawn(process.execPath, ['--import', 'tsx', 'services/runner/src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (b) => (logs += b));
    server.stderr!.on('data', (b) => (logs += b));
    for (let t0 = Date.now(); ;) {
      const ready = await fetch(`${baseUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() - t0 > 60_000) throw new Error(`server did not become ready:\n${logs.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  });
  after(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps only hashes', async () => {
    const secrets: string[] = [PASSWORD, CLI_PASSWORD];
    const json = { Accept: 'application/json', 'Content-Type': 'application/json' };

    const legacy = await fetch(`${baseUrl}/demo/api/v1/tokens/create`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'planner@demo.test', password: PASSWORD }),
    });
    assert.equal(legacy.status, 200);
    const legacyToken: string = ((await legacy.json()) as { token: string }).token;
    secrets.push(legacyToken);

    const created = await fetch(`${baseUrl}/demo/api/v1/tokens`, {
      method: 'POST',
      headers: { ...json, Authorization: `Bearer ${legacyToken}` },
      body: JSON.stringify({ name: 'scan', scopes: ['public_api.read'] }),
    });
    assert.equal(created.status, 201);
    const apiToken: string = ((await created.json()) as { data: Array<{ plain_text_token: string }> }).data[0]!.plain_text_token;
    secrets.push(apiToken);
    assert.equal(
      (await fetch(`${baseUrl}/demo/api/v1/uoms`, { headers: { Accept: 'application/json', Authorization: `Bearer ${apiToken}` } })).status,
      200,
    );
    await fetch(`${baseUrl}/demo/api/v1/tokens/create`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: 'viewer@demo.test', password: `${PASSWORD}-wrong` }),
    });

    // Page login: the session cookie is a secret too.
    const loginPage = await fetch(`${baseUrl}/demo/login`);
    const loginCookie = (loginPage.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = /name="_token" value="([^"]+)"/.exec(await loginPage.text())![1]!;
    const login = await fetch(`${baseUrl}/demo/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: loginCookie },
      body: new URLSearchParams({ _token: csrf, email: 'admin@demo.test', password: PASSWORD }).toString(),
    });
    assert.equal(login.status, 303);
    const session = /spl_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
    secrets.push(session);
    const page = await fetch(`${baseUrl}/demo/settings/api-access`, { headers: { Cookie: `spl_session=${session}` } });
    assert.equal(page.status, 200);

    const cli = await new Promise<number | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'services/tokens/src/cli/admin.ts',
          'user',
          'create',
          'demo',
          'scan@demo.test',
          '--password',
          CLI_PASSWORD,
          '--level',
          'public_api=view',
        ],
        {
          env: { ...env, LOG_LEVEL: 'silent' },
          stdio: 'ignore',
        },
      );
      child.on('exit', resolve);
    });
    assert.equal(cli, 0);

    // Let the store flush, then stop the server so every file is complete.
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));

    const needles = secrets.flatMap((s) => (s.includes('|') ? [s, s.split('|')[1]!, s.split('|')[1]!.slice(4, 44)] : [s]));
    assert.ok(logs.length > 1000, 'trace logs were captured');
    for (const needle of needles) assert.ok(!logs.includes(needle), `logs contain a secret (${needle.slice(0, 12)}…)`);
    assert.ok(logs.includes('exchangeCredentials'), 'the logs saw the calls that carried secrets');
    const files = filesUnder(dataDir);
    const stored = Buffer.concat(files.map((f) => readFileSync(f)));
    // Controls: the scan reads where the records are (the hash and the CLI's user are there).
    assert.ok(stored.includes(hashSecret(apiToken.split('|')[1]!)), 'the token hash is in the store');
    assert.ok(stored.includes('scan@demo.test'), 'the CLI-created user is in the store');
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const needle of needles) {
        assert.equal(bytes.indexOf(Buffer.from(needle)), -1, `${file} contains a secret (${needle.slice(0, 12)}…)`);
      }
    }
  });
});
