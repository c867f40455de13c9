/**
 * The fuzz run: the all-in-one system on free ports with the demo workspace, callers with
 * tokens of several kinds, run settings from the environment, and one function that sends a
 * generated request and says what is wrong with its answer.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { startSystem, type TestSystem } from '../../support/system';
import { contentTypeViolations, encodingViolations, filterViolations, shapeViolations } from './checks';
import { describeRequest, describeResponse, send, type FuzzRequest, type FuzzResponse } from './http';
import { render, type Caller, type Draft, type Operation } from './openapi';
import { triage, withheldBy } from '../known-defects';

/**
 * Runs per operation and class: `FUZZ_RUNS` (npm test: 10; npm run fuzz: 200), from
 * `FUZZ_SEED` (fixed by default, so a failure in CI replays exactly).
 */
export const SETTINGS = {
  seed: Number(process.env.FUZZ_SEED ?? 20261125),
  runs: Math.max(1, Number(process.env.FUZZ_RUNS ?? 10)),
  /** Shrinking re-sends requests; worth it in long runs, too slow for CI. */
  shrink: process.env.FUZZ_SHRINK === '1',
  /**
   * Growth allowed over the whole run, in MB: of the highest RSS sampled (catches a request
   * that allocates from a client-given size, even if it frees it again), and of the JS heap
   * after a full GC (catches leaks; RSS alone also grows with the store's mapped pages).
   */
  rssGrowthMb: Number(process.env.FUZZ_RSS_MB ?? 1024),
  heapGrowthMb: Number(process.env.FUZZ_HEAP_MB ?? 200),
};

export interface FuzzTarget {
  sys: TestSystem;
  callers: Caller[];
  /** A wide-scope token of the demo planner, for reads around writes. */
  planner: string;
  /** Ids of the callers' tokens: generated revocations must not pull them from under the run. */
  ownTokenIds: Set<number>;
  /** Answers seen, by status class and known defect, for the summary. */
  stats: {
    statuses: Map<string, number>;
    excused: Map<string, number>;
    withheld: Map<string, number>;
    sent: number;
    slowest: Array<{ ms: number; at: number; line: string }>;
  };
}

export async function startTarget(): Promise<FuzzTarget> {
  const sys = await startSystem();
  const call = (tenant: string) => ({ context: { requestId: 'fuzz', tenant } });
  for (const slug of ['demo', 'acme']) {
    await sys.clients.tokens.updateTenant(
      { slug, rate_limit: 1_000_000, rate_window_seconds: 60, monthly_credits: 1_000_000_000 },
      call(slug),
    );
  }
  const ownTokenIds = new Set<number>();
  const token = async (tenant: string, email: string, scopes: string[]) => {
    const created = await sys.clients.tokens.createToken(
      { user_email: email, name: `fuzz ${scopes.join(' ')}`, scopes, expires_at: '' },
      call(tenant),
    );
    ownTokenIds.add(created.token!.id);
    return created.plain_text_token;
  };
  const json = { Accept: 'application/json' };
  const bearer = (t: string) => ({ ...json, Authorization: `Bearer ${t}` });
  const planner = await token('demo', 'planner@demo.test', ['*']);
  const callers: Caller[] = [
    // Weighted towards tokens that pass both gates, so requests reach validation and handlers.
    { name: 'demo planner *', tenant: 'demo', headers: bearer(planner) },
    { name: 'demo planner * (2)', tenant: 'demo', headers: bearer(planner) },
    { name: 'demo admin *', tenant: 'demo', headers: bearer(await token('demo', 'admin@demo.test', ['*'])) },
    {
      name: 'demo planner, every scope by name',
      tenant: 'demo',
      headers: bearer(
        await token('demo', 'planner@demo.test', [
          'public_api.read',
          'public_api.write',
          'public_api.compute',
          'public_api.workflow',
          'public_api.workflow.replace',
        ]),
      ),
    },
    { name: 'acme admin *', tenant: 'acme', headers: bearer(await token('acme', 'admin@acme.test', ['*'])) },
    { name: 'demo viewer read', tenant: 'demo', headers: bearer(await token('demo', 'viewer@demo.test', ['public_api.read'])) },
    { name: 'demo token on acme', tenant: 'acme', headers: bearer(planner) },
    { name: 'no token (JSON client)', tenant: 'demo', headers: json },
    { name: 'no token (browser)', tenant: 'demo', headers: { Accept: 'text/html' } },
    { name: 'unknown token', tenant: 'demo', headers: bearer('1|0000000000000000000000000000000000000000') },
  ];
  return {
    sys,
    callers,
    planner,
    ownTokenIds,
    stats: { statuses: new Map(), excused: new Map(), withheld: new Map(), sent: 0, slowest: [] },
  };
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

/** The system runs in this process: a slow answer with a long loop stall means CPU work blocked it, not I/O. */
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

/** Sends a draft; throws a report of the request and answer when the answer breaks a rule. */
export async function exercise(t: FuzzTarget, d: Draft): Promise<FuzzResponse | null> {
  if (d.op.id === 'DELETE /{tenant}/api/v1/tokens/{id}' && t.ownTokenIds.has(Number(d.pathValues.id))) return null;
  return exerciseRequest(t, d.op, render(d), d.caller.name);
}

/** Sends one request of `op` and checks its answer (known defects aside); null when withheld. */
export async function exerciseRequest(t: FuzzTarget, op: Operation, req: FuzzRequest, caller: string): Promise<FuzzResponse | null> {
  const held = withheldBy(op, req);
  if (held) {
    bump(t.stats.withheld, held.id);
    return null;
  }
  if (process.env.FUZZ_TRACE === '1') console.log(`> ${req.method} ${req.path.slice(0, 160)} [${req.kind}] ${caller}`);
  let res: FuzzResponse;
  loopDelay.reset();
  try {
    res = await send(t.sys.baseUrl, req);
  } catch (err) {
    throw new Error(`no answer: ${(err as Error).message}\n--- request (caller: ${caller})\n${describeRequest(req)}`, { cause: err });
  }
  t.stats.sent++;
  t.stats.slowest.push({ ms: res.ms, at: t.stats.sent, line: `${res.status} ${req.method} ${req.path.slice(0, 100)} [${req.kind}]` });
  t.stats.slowest = t.stats.slowest.sort((a, b) => b.ms - a.ms).slice(0, 10);
  if (process.env.FUZZ_TRACE === '1') console.log(`< ${res.status} ${Math.round(res.ms)} ms`);
  bump(t.stats.statuses, `${op.id} ${res.status}`);
  const stallMs = loopDelay.max / 1e6;
  const violations = [
    ...shapeViolations(op, req, res).map((v) =>
      v.startsWith('answered in') ? `${v}; the event loop stalled up to ${Math.round(stallMs)} ms meanwhile` : v,
    ),
    ...contentTypeViolations(op, req, res),
    ...encodingViolations(op, req, res),
    ...filterViolations(op, req, res),
  ];
  const { failures, excusedBy } = triage(op, req, res, violations);
  for (const id of new Set(excusedBy)) {
    bump(t.stats.excused, id);
    if (process.env.FUZZ_VERBOSE === '1')
      console.log(`excused by ${id}: ${res.status} ${req.method} ${req.path.slice(0, 120)} [${req.kind}]`);
  }
  if (failures.length) {
    throw new Error(
      `${failures.join('; ')}\n--- request (caller: ${caller})\n${describeRequest(req)}\n--- answer\n${describeResponse(res)}`,
    );
  }
  return res;
}

/** A stable per-property seed, so one operation's stream does not shift when another is added. */
export function seedFor(name: string): number {
  let h = SETTINGS.seed | 0;
  for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) | 0;
  return h;
}

/**
 * Runs the property for one operation and returns a failure report (or null): the seed and
 * path that replay it, how to rerun, and the failing request and answer.
 */
export async function runProperty(
  title: string,
  name: string,
  arb: fc.Arbitrary<Draft>,
  runs: number,
  t: FuzzTarget,
): Promise<string | null> {
  const seed = seedFor(name);
  const details = await fc.check(
    fc.asyncProperty(arb, async (d) => {
      await exercise(t, d);
    }),
    { seed, numRuns: runs, endOnFailure: !SETTINGS.shrink },
  );
  if (!details.failed) return null;
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return (
    `${name}: failed after ${details.numRuns} runs (fast-check seed ${details.seed}, path ${details.counterexamplePath})\n` +
    `  rerun: FUZZ_SEED=${SETTINGS.seed} FUZZ_RUNS=${SETTINGS.runs} npx mocha tests/fuzz/*.test.ts --grep '${title}'\n${error}`
  );
}

/** Samples RSS every 50 ms from now on; `stop()` answers the highest seen. */
export function watchRss(): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss());
    },
  };
}

/** The JS heap in use after a full collection. */
export function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

export async function healthOf(t: FuzzTarget): Promise<{ healthz: number; readyz: number; ms: number }> {
  const started = performance.now();
  const [h, r] = await Promise.all([
    send(t.sys.baseUrl, { operation: 'health', kind: 'probe', method: 'GET', path: '/healthz', headers: {} }, 5000),
    send(t.sys.baseUrl, { operation: 'ready', kind: 'probe', method: 'GET', path: '/readyz', headers: {} }, 5000),
  ]);
  return { healthz: h.status, readyz: r.status, ms: performance.now() - started };
}
