/**
 * The operations CLI, `npm run ops -- <command>`: looks after the message bus of a running
 * system with the server's own environment (AMQP_URL and BUS_NAMESPACE, or DATA_DIR and
 * MONGODB_URL for the embedded bus). Today it lists and replays the dead letters of the work
 * queues every module declares (ServiceModule.workQueues).
 */
import { parseArgs } from 'node:util';
import { ConfigError, isAppError, loadConfig, openBus, openStore, type Bus, type Config, type ServiceModule } from '@supply/kit';

const USAGE = `Usage: npm run ops -- <command>

  dead-letters list [<queue> ...] [--limit <n>] [--json]   what rests in the dead-letter queues (default: every work queue), oldest first
  dead-letters replay <queue> [--limit <n>]                moves up to n (default 100) dead letters back onto their queue

A replayed message runs again from its first delivery; the job it belongs to counts its new
outcome in place of the failure it reported. Replay once the cause is mended.
Exit status: 0 done, 2 bad usage or configuration, 3 the bus is not reachable.
`;

export interface OpsIo {
  stdout(line: string): void;
  stderr(line: string): void;
  env: Record<string, string | undefined>;
}

class UsageError extends Error {}

/** The most a list shows per queue and a replay moves by default. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;
const BODY_CHARS = 300;
const CONNECT_TIMEOUT_MS = 10_000;

function limitOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT} (got ${value})`);
  return n;
}

/** Every work queue of the system, in module order. */
export function workQueuesOf(modules: readonly ServiceModule[]): string[] {
  return modules.flatMap((m) => m.workQueues ?? []);
}

async function openSystemBus(config: Config): Promise<{ bus: Bus; close(): Promise<void> }> {
  const store = config.AMQP_URL
    ? undefined
    : await openStore({
        database: 'bus',
        dataDir: config.dataDir,
        mongodbUrl: config.MONGODB_URL,
        databasePrefix: config.MONGODB_DATABASE_PREFIX,
      });
  // An operator waits seconds, not the server's half minute, to hear the broker is not there.
  const bus = await openBus({
    amqpUrl: config.AMQP_URL,
    namespace: config.BUS_NAMESPACE,
    store,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    sendTimeoutMs: CONNECT_TIMEOUT_MS,
  });
  return {
    bus,
    async close() {
      await bus.close();
      await store?.close();
    },
  };
}

async function run(args: string[], queues: readonly string[], bus: () => Promise<Bus>, out: (line: string) => void): Promise<void> {
  const [group, verb, ...rest] = args;
  if (group !== 'dead-letters' || (verb !== 'list' && verb !== 'replay')) throw new UsageError(`unknown command: ${args.join(' ')}`);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { limit: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const limit = limitOf(parsed.values.limit);
  for (const q of parsed.positionals) {
    if (!queues.includes(q)) throw new UsageError(`unknown queue ${q}; the work queues are ${queues.join(', ')}`);
  }
  if (verb === 'replay') {
    if (parsed.positionals.length !== 1 || parsed.values.json) throw new UsageError('dead-letters replay takes one <queue> and --limit');
    const queue = parsed.positionals[0]!;
    const moved = await (await bus()).replayDeadLetters(queue, limit);
    out(`Replayed ${moved} dead letter${moved === 1 ? '' : 's'} of ${queue} onto the queue.`);
    return;
  }
  const chosen = parsed.positionals.length > 0 ? parsed.positionals : queues;
  const found = [];
  for (const queue of chosen) found.push({ queue, messages: await (await bus()).deadLetters<unknown>(queue, limit) });
  if (parsed.values.json) {
    out(
      JSON.stringify({
        queues: found.map((f) => ({ queue: f.queue, count: f.messages.length, more: f.messages.length >= limit, messages: f.messages })),
      }),
    );
    return;
  }
  for (const { queue, messages } of found) {
    const more = messages.length >= limit ? ` (the first ${limit}; --limit shows more)` : '';
    out(`${queue}: ${messages.length} dead letter${messages.length === 1 ? '' : 's'}${more}`);
    for (const m of messages) {
      const body = JSON.stringify(m.body);
      out(`  ${m.messageId}  ${body.length > BODY_CHARS ? `${body.slice(0, BODY_CHARS)}…` : body}`);
    }
  }
}

export async function main(args: string[], io: OpsIo, modules: readonly ServiceModule[]): Promise<number> {
  if (args.length === 0 || args[0] === 'help' || args.includes('--help')) {
    io.stdout(USAGE);
    return args.length === 0 ? 2 : 0;
  }
  let config: Config;
  try {
    config = loadConfig({ target: 'all' }, io.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(err.message);
      return 2;
    }
    throw err;
  }
  let opened: Awaited<ReturnType<typeof openSystemBus>> | undefined;
  try {
    await run(args, workQueuesOf(modules), async () => (opened ??= await openSystemBus(config)).bus, io.stdout);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (isAppError(err) && (err.code === 'unavailable' || err.code === 'deadline_exceeded')) {
      io.stderr(
        `error: the message bus is not reachable (${err.message}). Run this with the server's environment (AMQP_URL, BUS_NAMESPACE, or DATA_DIR).`,
      );
      return 3;
    }
    throw err;
  } finally {
    await opened?.close().catch(() => undefined);
  }
}
