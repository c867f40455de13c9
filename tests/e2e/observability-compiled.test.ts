// Issue 17's "done when", checked on the compiled all-in-one server as `npm start` runs it:
// after the README walkthrough (and one refused request), /metrics shows every family with live values, each request
// has exactly one access line, and a sync's request id reaches workflows and transactional.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeRun, runShBlocks, shBlocks } from '../support/doc-blocks';
import { freePortRange } from '../support/ports';
import { buildOnce, REPO_ROOT, startNode, waitFor, type NodeProc } from '../support/processes';

const HEADING = '## Five-minute walkthrough';
const DOC_API = 'http://localhost:8080';
/** Families that only move when something goes wrong or a client overruns a limit: they must show, at 0 or more. */
const MAY_BE_ZERO = new Set([
  'supply_http_requests_in_flight',
  'supply_job_parts_retried_total',
  'supply_metering_limit_rejections_total',
  'supply_bus_queue_messages',
  'supply_bus_queue_oldest_message_age_seconds',
]);

type Line = Record<string, unknown>;

describe('observability on the compiled server after the README walkthrough', function () {
  this.timeout(240_000);
  let dir: string;
  let proc: NodeProc | undefined;
  let metricsPort: number;
  const lines: Line[] = [];

  before(async () => {
    buildOnce();
    dir = mkdtempSync(join(tmpdir(), 'supply-obs-dist-'));
    const base = await freePortRange(7);
    metricsPort = base + 6;
    const api = `http://127.0.0.1:${base + 5}`;
    const env = {
      PORT: String(base + 5),
      GRPC_BASE_PORT: String(base),
      METRICS_PORT: String(metricsPort),
      DATA_DIR: dir,
      LOG_LEVEL: 'debug',
    };
    proc = startNode([], env);
    // Whole lines only: a chunk may end mid-line.
    let partial = '';
    proc.child.stdout!.on('data', (b) => {
      const parts = (partial + String(b)).split('\n');
      partial = parts.pop()!;
      for (const p of parts) if (p.startsWith('{')) lines.push(JSON.parse(p) as Line);
    });
    await waitFor(`${api}/readyz`, 60_000);
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const blocks = shBlocks(readme, HEADING).map((b) => b.replaceAll(DOC_API, api));
    const run = await runShBlocks(blocks, { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    assert.equal(run.code, 0, describeRun(run));
    // The walkthrough is refused nothing; refusals are counted per route, so one shows the family.
    assert.equal((await fetch(`${api}/demo/api/v1/items`, { headers: { Accept: 'application/json' } })).status, 401);
  });
  after(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows every family with live values on METRICS_PORT', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const families = [...text.matchAll(/^# TYPE (supply_\S+) (\S+)$/gm)].map((m) => m[1]!);
    assert.ok(families.length >= 23, families.join());
    const samples = text.split('\n').filter((l) => l && !l.startsWith('#'));
    const valuesOf = (family: string) =>
      samples
        .filter((l) => new RegExp(`^${family}(_count|_sum|_bucket)?(\\{| )`).test(l))
        .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
    const silent = families.filter((f) => (MAY_BE_ZERO.has(f) ? valuesOf(f).length === 0 : !valuesOf(f).some((v) => v > 0)));
    assert.deepEqual(silent, [], 'families without a live value');
    assert.ok(
      samples.some((l) => l.startsWith('process_cpu_seconds_total')),
      'default process metrics',
    );
  });

  it('writes exactly one access line per request, and the sync request id reaches workflows and transactional', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const answered = text
      .split('\n')
      .filter((l) => l.startsWith('supply_http_requests_total{'))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    const access = lines.filter((l) => l.access === true);
    assert.equal(access.length, answered, 'one access line per answered request');
    const ids = access.map((l) => l.request_id);
    assert.ok(ids.every((id) => typeof id === 'string' && id.length > 0));
    assert.equal(new Set(ids).size, ids.length, 'each with its own request id');
    const sync = access.find((l) => l.method === 'POST' && l.route === '/:tenant/api/v1/workflows/sync-sales');
    assert.ok(sync, 'the walkthrough posted a sync');
    const caused = lines.filter((l) => l.request_id === sync.request_id && l.access !== true);
    const modules = new Set(caused.map((l) => l.module));
    assert.ok(modules.has('workflows') && modules.has('transactional'), `modules with the sync's request id: ${[...modules].join(', ')}`);
    assert.ok(
      caused.every((l) => l.tenant === 'demo'),
      'with its tenant',
    );
  });
});
