// Runs the compiled server as the image does (`node --enable-source-maps dist/main.js`), and
// the drain scenario the SIGTERM tests put every process through.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request, Agent, type IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The image's entrypoint arguments after `node` (deploy/Dockerfile), relative to its WORKDIR. */
export const ENTRYPOINT = ['--enable-source-maps', 'dist/main.js'];

/** Compiles dist/ from the sources under test (a stale build would test old code). */
export function buildOnce(): void {
  if ((globalThis as { __supplyBuilt?: boolean }).__supplyBuilt) return;
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: REPO_ROOT, stdio: 'pipe' });
  (globalThis as { __supplyBuilt?: boolean }).__supplyBuilt = true;
}

export interface NodeProc {
  child: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
}

const live = new Set<ChildProcess>();
// A test that fails before its cleanup must not leave servers behind (SIGTERM: a launcher passes it on to its targets).
process.on('exit', () => {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

/** `node <entrypoint> <args>` in `cwd` with exactly `env` (plus PATH and HOME). */
export function startNode(args: string[], env: Record<string, string>, cwd = REPO_ROOT, entry = ENTRYPOINT): NodeProc {
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  // Whole lines only: a chunk may end mid-line (a launcher's targets share its pipes).
  for (const stream of [child.stdout!, child.stderr!]) {
    let partial = '';
    stream.on('data', (b) => {
      const parts = (partial + String(b)).split('\n');
      partial = parts.pop()!;
      logs.push(...parts.filter(Boolean));
    });
    stream.on('end', () => {
      if (partial) logs.push(partial);
    });
  }
  live.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      live.delete(child);
      resolve(code);
    }),
  );
  return { child, logs, exited };
}

export async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(
  url: string,
  opts: { method?: string; agent?: Agent; headers?: Record<string, string> },
  write?: (req: import('node:http').ClientRequest) => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', agent: opts.agent, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (write) write(req);
    else req.end();
  });
}

/** A CSV of `rows` History day rows for SKU-0001 x Retail, one per day from `start`. */
export function salesCsvRows(start: string, rows: number, quantity: number): string {
  const t0 = Date.parse(`${start}T00:00:00Z`);
  const lines = ['sale_type_name,item_name,customer_group_name,sell_date,timing_interval,quantity,uom'];
  for (let i = 0; i < rows; i++)
    lines.push(`History,SKU-0001,Retail,${new Date(t0 + i * 86_400_000).toISOString().slice(0, 10)},day,${quantity},ea`);
  return `${lines.join('\n')}\n`;
}

export interface DrainOutcome {
  jobId: number;
  /** SIGTERM to exit. */
  exitMs: number;
  /** The upload's answer; it was sent on a keep-alive connection. */
  upload: Answer;
  /** Answers a busy keep-alive client got after the signal (gateway only), and how its loop ended. */
  busy: { after: Array<Answer & { at: number }>; ended: string };
  /** When the signal was sent (epoch ms). */
  signalledAt: number;
  /** What `probe` saw right after the signal. */
  probed?: unknown;
}

/** Requests /healthz back to back on one keep-alive connection until the server lets go of it. */
function busyClient(baseUrl: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const answers: Array<Answer & { at: number }> = [];
  let stop = false;
  const loop = (async () => {
    for (let i = 0; i < 100_000 && !stop; i++) {
      try {
        const a = await send(`${baseUrl}/healthz`, { agent });
        answers.push({ ...a, at: Date.now() });
      } catch (err) {
        return (err as NodeJS.ErrnoException).code ?? String(err);
      }
    }
    return 'stopped';
  })().finally(() => agent.destroy());
  return { answers, ended: loop, halt: () => (stop = true) };
}

/**
 * While a CSV upload is half sent (a slow request through the gateway into the workflows
 * service's ImportFile stream), `kill()` sends SIGTERM; then the rest of the file follows.
 * Checks the process exits 0 within `budgetMs` and returns what the clients saw.
 */
export async function drainScenario(opts: {
  baseUrl: string;
  token: string;
  csv: string;
  kill(): void;
  exited: Promise<number | null>;
  budgetMs: number;
  /** The signalled process is the gateway: a busy keep-alive client runs through the signal. */
  gatewayDraining: boolean;
  /** Called 100 ms after the signal (e.g. a readiness check). */
  probe?(): Promise<unknown>;
  /**
   * The signalled process is not on the upload's path (a service other than workflows): it
   * exits and this brings it back while the upload is still half sent.
   */
  restartBeforeFinishing?(): Promise<void>;
}): Promise<DrainOutcome> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const busy = opts.gatewayDraining ? busyClient(opts.baseUrl) : undefined;
  try {
    const boundary = `----drain${Date.now()}`;
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="drain.csv"\r\nContent-Type: text/csv\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const half = Math.floor(opts.csv.length / 2);
    let finish!: () => void;
    const upload = send(
      `${opts.baseUrl}/demo/api/v1/workflows/sync-sales/import`,
      {
        method: 'POST',
        agent,
        headers: {
          Authorization: `Bearer ${opts.token}`,
          Accept: 'application/json',
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
        },
      },
      (req) => {
        req.write(head + opts.csv.slice(0, half));
        finish = () => req.end(opts.csv.slice(half) + tail);
      },
    );
    // The gateway has opened the workflows stream and staged part of the file.
    await new Promise((r) => setTimeout(r, 400));
    const t0 = Date.now();
    opts.kill();
    await new Promise((r) => setTimeout(r, 100));
    const probed = await opts.probe?.();
    let code: number | null = null;
    let exitMs = 0;
    if (opts.restartBeforeFinishing) {
      code = await opts.exited;
      exitMs = Date.now() - t0;
      await opts.restartBeforeFinishing();
    } else {
      await new Promise((r) => setTimeout(r, 300));
    }
    finish();
    const answer = await upload;
    if (!opts.restartBeforeFinishing) {
      code = await opts.exited;
      exitMs = Date.now() - t0;
    }
    busy?.halt();
    const ended = busy ? await busy.ended : 'none';
    assert.equal(code, 0, 'exits 0');
    assert.ok(exitMs < opts.budgetMs + 250, `exited ${exitMs} ms after SIGTERM (budget ${opts.budgetMs} ms)`);
    assert.equal(answer.status, 202, answer.body);
    // Answers to requests sent well after the signal (the first may have been on the wire already).
    const after = busy ? busy.answers.filter((a) => a.at > t0 + 20) : [];
    return { jobId: JSON.parse(answer.body).data[0].job_id, exitMs, upload: answer, busy: { after, ended }, signalledAt: t0, probed };
  } finally {
    busy?.halt();
    agent.destroy();
  }
}
