// Runs the "## curl examples" of every docs/<area>.md against the compiled server, so the
// documented requests stay true: any answer of 400 or above fails the block (curl --fail-with-body).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, runShBlocks, shBlocks } from '../support/doc-blocks';
import { freePortRange } from '../support/ports';
import { buildOnce, REPO_ROOT, startNode, waitFor, type NodeProc } from '../support/processes';

const HEADING = '## curl examples';
const DOCS = join(REPO_ROOT, 'docs');
/** Areas whose every endpoint must have an example (alphabetical: supply-planning runs before transactional reads plans). */
const AREAS = ['api', 'forecasting', 'identity', 'metering', 'reference', 'supply-planning', 'transactional', 'workflows'];

describe("docs: every area's curl examples run as written", function () {
  this.timeout(600_000);
  let dir: string;
  let proc: NodeProc | undefined;
  let shellEnv: Record<string, string>;

  before(async () => {
    buildOnce();
    dir = mkdtempSync(join(tmpdir(), 'supply-docs-'));
    const base = await freePortRange(6);
    const env = {
      PORT: String(base + 5),
      GRPC_BASE_PORT: String(base),
      METRICS_PORT: '0',
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'warn',
      SYNC_JOBS_PER_TENANT: '50',
    };
    const api = `http://127.0.0.1:${base + 5}`;
    proc = startNode([], env);
    await waitFor(`${api}/readyz`, 60_000);
    const admin = (...args: string[]) =>
      execFileSync(process.execPath, ['dist/admin.js', ...args], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
      }).trim();
    // The examples together send more than the default 120 requests a minute of one token.
    admin('limits', 'set', 'demo', '--rate', '100000', '--window', '60');
    const token = admin('token', 'create', 'demo', 'admin@demo.test', '--name', 'docs', '--scopes', '*');
    shellEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', API: api, TOKEN: token };
  });
  after(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('every area document has curl examples', () => {
    const withExamples = readdirSync(DOCS).filter(
      (f) => f.endsWith('.md') && readFileSync(join(DOCS, f), 'utf8').includes(`\n${HEADING}\n`),
    );
    assert.deepEqual(withExamples.map((f) => f.replace(/\.md$/, '')).sort(), AREAS);
  });

  for (const area of AREAS) {
    it(`docs/${area}.md`, async () => {
      const blocks = shBlocks(readFileSync(join(DOCS, `${area}.md`), 'utf8'), HEADING);
      assert.ok(blocks.length > 0);
      const cwd = mkdtempSync(join(dir, `${area}-`));
      const run = await runShBlocks(blocks, { cwd, env: shellEnv, prelude: 'curl() { command curl --fail-with-body "$@"; }' });
      const where = `${describeRun(run)}\nserver:\n${proc!.logs.slice(-20).join('\n')}`;
      if (process.env.DOCS_EXAMPLES_VERBOSE) console.log(describeRun(run));
      assert.equal(run.code, 0, where);
      assert.equal(run.out.length, blocks.length, where);
      const out = run.out.join('');
      assert.doesNotMatch(out, /"status":"(failed|partially_succeeded)"/, `every job succeeded: ${where}`);
      assert.doesNotMatch(out, /"type":"\/problems\//, `no problem answer: ${where}`);
    });
  }
});
