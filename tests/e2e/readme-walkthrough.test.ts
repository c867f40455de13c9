// Runs the README's "Five-minute walkthrough" as written (its ```sh blocks, in order, in one bash)
// against the compiled server started as `npm start` runs it, so the front door cannot rot.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, runShBlocks, shBlocks } from '../support/doc-blocks';
import { freePortRange } from '../support/ports';
import { buildOnce, REPO_ROOT, startNode, waitFor, type NodeProc } from '../support/processes';

const HEADING = '## Five-minute walkthrough';
const DOC_API = 'http://localhost:8080';

describe('README: the five-minute walkthrough runs as written', function () {
  this.timeout(240_000);
  let dir: string;
  let proc: NodeProc | undefined;
  let env: Record<string, string>;
  let api: string;

  before(async () => {
    buildOnce();
    dir = mkdtempSync(join(tmpdir(), 'supply-readme-'));
    const base = await freePortRange(6);
    api = `http://127.0.0.1:${base + 5}`;
    env = { PORT: String(base + 5), GRPC_BASE_PORT: String(base), METRICS_PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'warn' };
    proc = startNode([], env);
    await waitFor(`${api}/readyz`, 60_000);
  });
  after(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the walkthrough blocks', () => {
    const blocks = shBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), HEADING);
    assert.equal(blocks.length, 8, 'health, CLI token, HTTP token, read, sync, forecast, plan, view plan');
    assert.ok(
      blocks.every((b) => !b.includes('jq')),
      'the walkthrough needs only curl, sed and grep',
    );
    assert.ok(blocks.join('\n').includes(DOC_API), `the blocks reach the server at ${DOC_API}`);
  });

  it('every command succeeds and answers what the README says', async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const blocks = shBlocks(readme, HEADING).map((b) => b.replaceAll(DOC_API, api));
    // The CLI finds the server as a reader's shell would: the same DATA_DIR and ports, nothing else.
    const run = await runShBlocks(blocks, { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    const where = `${describeRun(run)}\nserver:\n${proc!.logs.slice(-20).join('\n')}`;
    assert.equal(run.code, 0, where);
    assert.equal(run.out.length, blocks.length, `every block ran: ${where}`);
    const [health, cliToken, httpToken, read, sync, forecast, plan, viewPlan] = run.out as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];

    assert.match(health, /^\{"status":"ok"\}\n\{"status":"ready","checks":\{/, where);
    assert.doesNotMatch(health, /":false/, `every readiness check passes: ${health}`);
    assert.match(cliToken, /^\d+\|spl_[A-Za-z0-9]{40}[0-9a-f]{8}\n$/, `the CLI printed a token and nothing else: ${cliToken}`);
    assert.match(httpToken, /^"plain_text_token":"\d+\|spl_[A-Za-z0-9]{48}"\n$/, `POST /tokens with the legacy token: ${httpToken}`);

    assert.match(read, /\nHTTP 200\n$/, `read: ${read}`);
    assert.match(read, /"data":\[\{"id":\d+,"name":"SKU-0001"/, read);
    assert.match(read, /"per_page":2/, read);

    assert.match(sync, /"job_id":\d+/, sync);
    assert.match(sync, /"status":"queued"/, sync);
    assert.match(sync, /HTTP 202\n/, sync);
    const finalJob = sync.slice(sync.indexOf('HTTP 202'));
    assert.match(finalJob, /"kind":"sales_sync","status":"succeeded"/, `the job reached succeeded: ${finalJob}`);
    assert.match(finalJob, /"progress":\{"processed":1,"total":1\}/, finalJob);

    assert.match(forecast, /"sale_type_name":"Forecast"/, `forecasts are read back: ${forecast}`);
    assert.match(forecast, /"item_name":"SKU-0001"/, forecast);
    assert.match(forecast, /"customer_group_name":"Retail"/, forecast);

    assert.match(
      plan,
      /^"message":"Supply plan generated for SKU-0001 at Partner-Mart: 52 week buckets of view Default, partner mode/,
      `plan: ${plan}`,
    );
    assert.match(plan, /\n"totals":\{"satisfied_demand":[\d.]+,"revenue":[\d.]+,/, plan);
    assert.match(plan, /\nHTTP 200\n$/, plan);

    // The whole Default view in partner mode: a job, followed to succeeded.
    assert.match(viewPlan, /^HTTP 202\n/, `view plan: ${viewPlan}`);
    assert.match(viewPlan, /\n"status":"succeeded"\n/, `the view run reached succeeded: ${viewPlan}`);
    assert.match(
      viewPlan,
      /\n"message":"Planned 108 of 108 item-locations of view Default \(partner mode, unconstrained supply, plan run \d+\)\."\n$/,
      viewPlan,
    );
  });
});
