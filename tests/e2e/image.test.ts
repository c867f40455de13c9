// The container image, proven without a container engine: deploy/Dockerfile's stages are
// replayed into a scratch folder (its COPY lines, `npm ci --omit=dev`), then its exact
// ENTRYPOINT runs there for a smoke test and the SIGTERM drain.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { createClients, loadConfig } from '@supply/kit';
import { freePortRange } from '../support/ports';
import { buildOnce, drainScenario, REPO_ROOT, salesCsvRows, startNode, waitFor, type NodeProc } from '../support/processes';
import { waitForJob } from './workflows-support';

const run = promisify(execFile);

interface Stage {
  name: string;
  from: string;
  lines: string[];
}

function stagesOf(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  const args = new Map<string, string>();
  // Joins continued lines, drops comments.
  const lines = dockerfile
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) {
      const image = from[1]!.replace(/\$\{(\w+)\}/g, (_, k: string) => args.get(k) ?? '');
      stages.push({ name: from[2] ?? `stage${stages.length}`, from: image, lines: [] });
    } else if (stages.length === 0 && /^ARG\s+(\w+)=(\S+)$/.test(line)) {
      const [, k, v] = /^ARG\s+(\w+)=(\S+)$/.exec(line)!;
      args.set(k!, v!);
    } else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

/** Replays a stage's COPY lines into `root` (its WORKDIR); `--from=<stage>` reads that stage's folder. */
function replayCopies(stage: Stage, root: string, folders: Record<string, string>): void {
  for (const line of stage.lines) {
    const m = /^COPY\s+(?:--from=(\S+)\s+)?(.+)$/.exec(line);
    if (!m) continue;
    const parts = m[2]!.split(/\s+/);
    const dest = parts.pop()!;
    for (const src of parts) {
      const base = m[1] ? folders[m[1]]! : REPO_ROOT;
      const from = join(base, src.replace(/^\/app\/?/, ''));
      const to = dest.endsWith('/') ? join(root, dest, src.replace(/\/$/, '').split('/').pop()!) : join(root, dest);
      if (dest === './' || dest === '.')
        cpSync(
          from,
          join(
            root,
            src
              .replace(/^\/app\/?/, '')
              .split('/')
              .pop()!,
          ),
          { recursive: true },
        );
      else cpSync(from, to, { recursive: true });
    }
  }
}

function listFiles(dir: string, skip: (path: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (skip(p)) continue;
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue; // a dangling workspace link: the bundle never follows it
      if (st.isDirectory()) walk(p);
      else out.push(`${relative(dir, p)} ${st.size} ${st.mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

describe('image: deploy/Dockerfile replayed without a container engine', function () {
  this.timeout(300_000);
  const dockerfile = readFileSync(join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8');
  const stages = stagesOf(dockerfile);
  const final = stages.at(-1)!;
  const directive = (name: string) =>
    final.lines.filter((l) => l.toUpperCase().startsWith(`${name} `)).map((l) => l.slice(name.length + 1).trim());
  const entrypoint = JSON.parse(directive('ENTRYPOINT')[0] ?? '[]') as string[];
  const imageEnv = Object.fromEntries(directive('ENV').flatMap((l) => l.split(/\s+/).map((kv) => kv.split('=') as [string, string])));
  let scratch: string;
  let app: string;
  const dirs: string[] = [];
  const procs: NodeProc[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'supply-image-'));
    dirs.push(d);
    return d;
  };

  before(async () => {
    buildOnce(); // the build stage's `npm run build`
    scratch = tmp();
    const deps = join(scratch, 'deps');
    app = join(scratch, 'app');
    mkdirSync(deps);
    mkdirSync(app);
    replayCopies(
      stages.find((s) => s.name === 'deps')!,
      deps,
      {},
    );
    const install = stages
      .find((s) => s.name === 'deps')!
      .lines.find((l) => l.startsWith('RUN '))!
      .slice(4)
      .split('&&')[0]!
      .trim()
      .split(/\s+/);
    assert.deepEqual(install.slice(0, 3), ['npm', 'ci', '--omit=dev']);
    // The local npm cache stands in for the registry.
    await run('npm', [...install.slice(1), '--prefer-offline'], { cwd: deps, env: { ...process.env, NODE_ENV: 'production' } });
    replayCopies(final, app, { deps, build: REPO_ROOT });
  });
  afterEach(() => {
    for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is multi-stage on the Node LTS of .nvmrc, runs node itself as a numeric non-root user, has OCI labels and no HEALTHCHECK', () => {
    const major = readFileSync(join(REPO_ROOT, '.nvmrc'), 'utf8').trim();
    assert.ok(stages.length >= 3, 'build, deps and runtime stages');
    for (const s of stages) assert.match(s.from, new RegExp(`^node:${major}-[a-z]+-slim$`), s.from);
    const engines = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).engines.node as string;
    assert.equal(engines, `>=${major}`);
    assert.deepEqual(entrypoint.slice(0, 1), ['node']);
    assert.ok(!entrypoint.some((a) => /npm|npx|tsx/.test(a)), entrypoint.join(' '));
    assert.match(directive('USER')[0] ?? '', /^[1-9]\d*:[1-9]\d*$/);
    assert.ok(!/^\s*HEALTHCHECK/im.test(dockerfile));
    const labels = directive('LABEL').join(' ');
    for (const l of ['title', 'description', 'version', 'revision', 'source'])
      assert.ok(labels.includes(`org.opencontainers.image.${l}=`), l);
    assert.equal(imageEnv.NODE_ENV, 'production');
  });

  it('.dockerignore keeps local data, dependencies, git and tests out of the build context', () => {
    const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    assert.equal(
      ignore.find((l) => l && !l.startsWith('#')),
      '*',
      'everything is out unless listed',
    );
    for (const l of ['**/node_modules', '**/data', '**/.data', '.git', '**/*.test.ts']) assert.ok(ignore.includes(l), l);
    assert.ok(!ignore.includes('!tests/') && !ignore.includes('!data/'));
  });

  it('holds production dependencies and compiled output only', () => {
    // Our own @types are devDependencies (protobufjs and mongodb still pull @types/node and @types/whatwg-url).
    const ours = ['@types/express', '@types/busboy', '@types/cookie-parser', '@types/amqplib', '@types/mocha'];
    for (const dev of ['typescript', 'tsx', 'esbuild', 'mocha', 'ts-proto', '@bufbuild/buf', 'playwright-core', 'autocannon', ...ours]) {
      assert.ok(!existsSync(join(app, 'node_modules', dev)), `${dev} is not in the image`);
    }
    for (const prod of ['@grpc/grpc-js', 'express', 'lmdb', 'pino', 'zod']) assert.ok(existsSync(join(app, 'node_modules', prod)), prod);
    const shipped = listFiles(app, (p) => p.includes(`${app}/node_modules`)).map((l) => l.split(' ')[0]!);
    assert.ok(!shipped.some((f) => f.endsWith('.ts')), shipped.filter((f) => f.endsWith('.ts')).join(', '));
    assert.ok(shipped.includes('dist/main.js') && shipped.includes('dist/main.js.map') && shipped.includes('dist/admin.js'));
  });

  it('the entrypoint serves (health, a token from the admin CLI, a read), writes only under DATA_DIR, and drains on SIGTERM', async () => {
    const base = await freePortRange(6);
    const volume = tmp();
    const env = {
      ...imageEnv,
      DATA_DIR: volume,
      PORT: String(base + 5),
      GRPC_BASE_PORT: String(base),
      SHUTDOWN_TIMEOUT_MS: '4000',
      LOG_LEVEL: 'info',
    };
    const before = listFiles(app);
    const node = startNode([], env, app, entrypoint.slice(1));
    procs.push(node);
    const url = `http://127.0.0.1:${base + 5}`;
    await waitFor(`${url}/healthz`, 30_000);
    await waitFor(`${url}/readyz`, 30_000);

    const admin = await run(
      process.execPath,
      ['--enable-source-maps', 'dist/admin.js', 'token', 'create', 'demo', 'planner@demo.test', '--name', 'smoke', '--scopes', '*'],
      {
        cwd: app,
        env: { PATH: process.env.PATH ?? '', ...env },
      },
    );
    const token = admin.stdout.trim();
    assert.match(token, /\|/);
    const uoms = await fetch(`${url}/demo/api/v1/uoms`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
    assert.equal(uoms.status, 200);
    assert.ok(((await uoms.json()) as { data: unknown[] }).data.length > 0);
    // The docs page's bundle ships in the compiled output, not as a runtime dependency.
    const docsBundle = await fetch(`${url}/docs/assets/scalar.js`);
    assert.equal(docsBundle.status, 200);
    assert.ok((await docsBundle.arrayBuffer()).byteLength > 100_000);

    const clients = createClients(loadConfig({ target: 'all', DATA_DIR: volume, GRPC_BASE_PORT: base }, {}));
    try {
      await clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, { context: { requestId: 'test', tenant: 'demo' } });
      const outcome = await drainScenario({
        baseUrl: url,
        token,
        csv: salesCsvRows('2081-01-01', 2_000, 5),
        kill: () => node.child.kill('SIGTERM'),
        exited: node.exited,
        budgetMs: 4_000,
        gatewayDraining: true,
      });
      assert.equal(outcome.upload.headers.connection, 'close');
      assert.ok(outcome.busy.after.every((a) => a.headers.connection === 'close'));
      assert.deepEqual(listFiles(app), before, 'nothing outside DATA_DIR was written');

      const again = startNode([], env, app, entrypoint.slice(1));
      procs.push(again);
      await waitFor(`${url}/readyz`, 30_000);
      const job = await waitForJob({ clients }, 'demo', token, outcome.jobId, 60_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      again.child.kill('SIGTERM');
      assert.equal(await again.exited, 0);
    } finally {
      clients.close();
    }
  });
});
