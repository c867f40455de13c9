// The gateway's hot path: `GET /demo/api/v1/uoms` through authentication (cached
// principal), both gates, validation, one meter call (rate + credits), one gRPC call to the
// reference service and its store read, the envelope, and the usage record on the bus;
// side by side in the same run with (a) a bare Express handler answering the same body and
// (b) Express plus one raw grpc-js unary call to a server answering the same bytes from memory
// (the floor of this architecture); the full path with the reference cache off (every read goes
// to the service: the miss path) and on (hits); then all of them at a fixed offered load (70% of
// the full path's maximum) for p50/p99.
// The full paths run the production build (`node dist/main.js`, compiled by scripts/build.mjs) in
// a child process each, whose CPU time is read from /proc (Linux); BENCH_SYSTEM=source runs them
// in this process from the TypeScript sources under the development loader instead, as `npm test`
// and `npm run dev` do (slower: the loader names every function the code creates at run time).
// `npm run bench -- gateway` or `npx tsx tests/bench/gateway.ts`.
// BENCH_SECONDS (default 5), BENCH_ROUNDS (3) and BENCH_CONNECTIONS (32) tune the runs;
// REDIS_URL meters in Redis.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { createClient } from 'redis';
import { api, startCompiledSystem, startSystem, type TestSystem } from '../support/system';

/** autocannon's command line, run as a child process so the load generator's CPU is not the server's. */
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PATH = '/demo/api/v1/uoms';
const SYSTEM = process.env.BENCH_SYSTEM === 'source' ? 'source' : 'compiled';

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time of the serving process (the gateway and every service) per request, in microseconds. */
  cpuUs: number;
  non2xx: number;
  errors: number;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** CPU time (user + system) of a process in microseconds: this one's own, or a child's from /proc. */
function cpuTimeUs(pid: number): number {
  if (pid === process.pid) {
    const used = process.cpuUsage();
    return used.user + used.system;
  }
  // utime and stime are fields 14 and 15; the command name before them may hold spaces, so count after its ')'.
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    throw new Error("the compiled system's CPU time is read from /proc (Linux); elsewhere run BENCH_SYSTEM=source");
  }
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / USER_HZ;
}

/** autocannon against `url`; CPU per request is that of the process `pid` serving it. */
async function load(url: string, headers: Record<string, string>, pid: number, seconds: number, rate?: number): Promise<Figures> {
  const args = [AUTOCANNON, '--json', '-c', String(CONNECTIONS), '-d', String(seconds)];
  if (rate !== undefined) args.push('-R', String(Math.round(rate)));
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  const cpu = cpuTimeUs(pid);
  const child = spawn(process.execPath, [...args, url], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const [code] = await once(child, 'exit');
  const used = cpuTimeUs(pid) - cpu;
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
    cpuUs: used / Math.max(1, result.requests.total),
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

const identity = (b: Buffer) => b;

/** A grpc-js server with one unary method answering `bytes` from memory, and a client of it. */
async function rawGrpc(bytes: Buffer): Promise<{ call(): Promise<Buffer>; close(): void }> {
  const server = new grpc.Server();
  const definition: grpc.ServiceDefinition = {
    Get: {
      path: '/bench.Echo/Get',
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
  server.addService(definition, { Get: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, bytes) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const empty = Buffer.alloc(0);
  return {
    call: () =>
      new Promise<Buffer>((resolve, reject) =>
        client.makeUnaryRequest('/bench.Echo/Get', identity, identity, empty, (err, value) => (err ? reject(err) : resolve(value!))),
      ),
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

export async function run(): Promise<void> {
  // REDIS_URL meters in Redis (under a namespace of this run); otherwise the in-memory meter.
  const redisUrl = process.env.REDIS_URL;
  const namespace = `bench-${randomBytes(4).toString('hex')}`;
  const meterEnv: Record<string, string> = redisUrl ? { REDIS_URL: redisUrl, BUS_NAMESPACE: namespace } : {};
  const start = (env: Record<string, string>): Promise<TestSystem & { pid?: number }> =>
    SYSTEM === 'compiled' ? startCompiledSystem({ env }) : startSystem({ env });
  const cached = await start(meterEnv);
  const uncached = await start({ ...meterEnv, REFERENCE_CACHE: 'off' });
  const bare = express();
  const floor = express();
  const servers: Server[] = [];
  let grpcFloor: Awaited<ReturnType<typeof rawGrpc>> | undefined;
  try {
    // Limits high enough that the bench measures the path, not the throttle.
    const tokens: string[] = [];
    for (const sys of [cached, uncached]) {
      await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 1_000_000_000, monthly_credits: 1_000_000_000 });
      tokens.push(await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']));
    }
    const headersOf = (token: string) => ({ Authorization: `Bearer ${token}`, Accept: 'application/json' });
    const first = await api(uncached, PATH, { token: tokens[1]! });
    if (first.status !== 200 || !first.headers.get('ratelimit')) throw new Error(`full path answered ${first.status}: ${first.text}`);
    const hit = await api(cached, PATH, { token: tokens[0]! });
    // Two systems seed the same records (at different times), so the answers differ only in timestamps.
    if (hit.status !== 200 || hit.text.length !== first.text.length) throw new Error(`cached path answered ${hit.status}: ${hit.text}`);

    const body = first.body;
    bare.disable('x-powered-by');
    bare.get(PATH, (_req, res) => {
      res.json(body);
    });
    grpcFloor = await rawGrpc(Buffer.from(first.text));
    floor.disable('x-powered-by');
    floor.get(PATH, (_req, res, next) => {
      grpcFloor!.call().then((bytes) => res.type('application/json').send(bytes), next);
    });
    const urlOf = async (app: express.Express) => {
      const server = createServer(app);
      servers.push(server);
      return `${await listen(server)}${PATH}`;
    };
    const targets = [
      { name: '(a) bare Express handler, same body', url: await urlOf(bare), headers: headersOf('x'), pid: process.pid },
      { name: '(b) Express + raw grpc-js unary call', url: await urlOf(floor), headers: headersOf('x'), pid: process.pid },
      {
        name: '(c) full path, cache off (miss path)',
        url: `${uncached.baseUrl}${PATH}`,
        headers: headersOf(tokens[1]!),
        pid: uncached.pid ?? process.pid,
      },
      { name: 'full path, cache hit', url: `${cached.baseUrl}${PATH}`, headers: headersOf(tokens[0]!), pid: cached.pid ?? process.pid },
    ];

    // Warm every target (JIT, connection pools, caches), then alternate, so drift in the machine's load hits all alike.
    for (const t of targets) await load(t.url, t.headers, t.pid, 2);
    const rounds = targets.map((): Figures[] => []);
    for (let i = 0; i < ROUNDS; i++) {
      for (const [k, t] of targets.entries()) rounds[k]!.push(await load(t.url, t.headers, t.pid, SECONDS));
    }
    const max = rounds.map(median);
    const [a, b, c, hitMax] = max as [Figures, Figures, Figures, Figures];
    // Latency at a fixed offered load every target can carry: 70% of the full path's maximum.
    const offered = 0.7 * c.rps;
    const fixed: Figures[] = [];
    for (const t of targets) fixed.push(await load(t.url, t.headers, t.pid, SECONDS, offered));

    console.log(
      `GET ${PATH}, ${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds of ${SECONDS} s, full paths ${SYSTEM === 'compiled' ? 'compiled (dist/main.js, a process each)' : 'from source (tsx, in this process)'}, meter: ${redisUrl ? 'Redis' : 'memory'}, load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs`,
    );
    console.log('maximum throughput:');
    for (const [k, t] of targets.entries()) console.log(row(t.name, max[k]!));
    console.log(`at a fixed offered load of ${Math.round(offered)} req/s (70% of (c)):`);
    for (const [k, t] of targets.entries()) console.log(row(t.name, fixed[k]!));
    const ratio = (x: Figures, y: Figures) => (x.rps / y.rps).toFixed(2);
    const cpuRatio = (x: Figures, y: Figures) => (y.cpuUs / x.cpuUs).toFixed(2);
    console.log(`  (c)/(b) throughput ${ratio(c, b)} (goal 0.70), CPU ${cpuRatio(c, b)}`);
    console.log(`  (c)/(a) throughput ${ratio(c, a)}, CPU ${cpuRatio(c, a)}`);
    console.log(`  (b)/(a) throughput ${ratio(b, a)}, CPU ${cpuRatio(b, a)}`);
    console.log(`  cached/(a) throughput ${ratio(hitMax, a)} (goal 0.50), CPU ${cpuRatio(hitMax, a)}`);
    console.log(`  cached/(c) throughput ${ratio(hitMax, c)}`);
    for (const [k, t] of targets.entries())
      console.log(`  rounds, req/s, ${t.name}: ${rounds[k]!.map((f) => Math.round(f.rps)).join(', ')}`);
  } finally {
    for (const server of servers) server.close();
    grpcFloor?.close();
    await cached.stop();
    await uncached.stop();
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
