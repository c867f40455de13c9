// The gateway's hot path: `GET /demo/api/v1/uoms` through authentication (cached
// principal), both gates, validation, one meter call (rate + credits), one gRPC call to the
// reference service and its store read, the envelope, and the usage record on the bus;
// side by side in the same run with a bare Express handler answering the same body.
// `npm run bench -- gateway` or `npx tsx tests/bench/gateway.ts`.
// BENCH_SECONDS (default 5), BENCH_ROUNDS (3) and BENCH_CONNECTIONS (32) tune the runs;
// REDIS_URL meters in Redis.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createClient } from 'redis';
import { api, startSystem } from '../support/system';

/** autocannon's command line, run as a child process so the load generator's CPU is not the server's. */
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PATH = '/demo/api/v1/uoms';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time of this process (server side: the gateway and every service) per request, in microseconds. */
  cpuUs: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Figures> {
  const args = [AUTOCANNON, '--json', '-c', String(CONNECTIONS), '-d', String(seconds)];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  const cpu = process.cpuUsage();
  const child = spawn(process.execPath, [...args, url], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const [code] = await once(child, 'exit');
  const used = process.cpuUsage(cpu);
  if (code !== 0) throw new Error(`autocannon exited with ${code}`);
  const result = JSON.parse(out) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  };
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: (used.user + used.system) / Math.max(1, result.requests.total),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** The round with the median throughput. */
function median(rounds: Figures[]): Figures {
  return [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)]!;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const row = (name: string, f: Figures) =>
  `  ${name.padEnd(38)} ${Math.round(f.rps).toLocaleString('en-US').padStart(7)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(3)} ms   CPU ${String(Math.round(f.cpuUs)).padStart(5)} µs/req` +
  (f.non2xx || f.errors ? `   (non-2xx ${f.non2xx}, errors ${f.errors})` : '');

export async function run(): Promise<void> {
  // REDIS_URL meters in Redis (under a namespace of this run); otherwise the in-memory meter.
  const redisUrl = process.env.REDIS_URL;
  const namespace = `bench-${randomBytes(4).toString('hex')}`;
  const sys = await startSystem({ env: redisUrl ? { REDIS_URL: redisUrl, BUS_NAMESPACE: namespace } : {} });
  const bare = express();
  let server: Server | undefined;
  try {
    // Limits high enough that the bench measures the path, not the throttle.
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 1_000_000_000, monthly_credits: 1_000_000_000 });
    const token = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    const headers = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
    const first = await api(sys, PATH, { token });
    if (first.status !== 200 || !first.headers.get('ratelimit')) throw new Error(`full path answered ${first.status}: ${first.text}`);

    const body = first.body;
    bare.disable('x-powered-by');
    bare.get(PATH, (_req, res) => {
      res.json(body);
    });
    server = createServer(bare);
    const bareUrl = `${await listen(server)}${PATH}`;
    const fullUrl = `${sys.baseUrl}${PATH}`;

    // Warm both (JIT, connection pools, caches), then alternate, so drift in the machine's load hits both alike.
    await load(bareUrl, headers, 2);
    await load(fullUrl, headers, 2);
    const bareRounds: Figures[] = [];
    const fullRounds: Figures[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      bareRounds.push(await load(bareUrl, headers, SECONDS));
      fullRounds.push(await load(fullUrl, headers, SECONDS));
    }
    const [bareFigures, fullFigures] = [median(bareRounds), median(fullRounds)];
    const credits = await api(sys, '/demo/api/v1/credits', { token });

    console.log(`GET ${PATH}, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${SECONDS} s, meter: ${redisUrl ? 'Redis' : 'memory'}, load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs`);
    console.log(row('bare Express handler, same body', bareFigures));
    console.log(row('full path (auth, meter, gRPC, store)', fullFigures));
    console.log(`  full / bare throughput                 ${(fullFigures.rps / bareFigures.rps).toFixed(2)}   (goal: at least 0.50)`);
    console.log(`  bare / full CPU per request            ${(bareFigures.cpuUs / fullFigures.cpuUs).toFixed(2)}   (CPU time of the server process; less sensitive to other load on the machine)`);
    console.log(`  rounds, req/s: bare ${bareRounds.map((f) => Math.round(f.rps)).join(', ')}; full ${fullRounds.map((f) => Math.round(f.rps)).join(', ')}`);
    console.log(`  credits spent in the run               ${(1_000_000_000 - credits.body.data[0].balance).toLocaleString('en-US')}`);
  } finally {
    server?.close();
    await sys.stop();
    if (redisUrl) {
      const redis = createClient({ url: redisUrl });
      await redis.connect();
      const keys = await redis.keys(`${namespace}:*`);
      if (keys.length) await redis.del(keys);
      await redis.quit();
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
