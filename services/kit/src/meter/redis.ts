/** The Redis meter: shared by every process, each check one atomic script call on server time. */
import { createClient, ErrorReply } from 'redis';
import { AppError, isAppError } from '../errors.js';
import { CHECK_SCRIPT, REFUND_SCRIPT } from './check-script.js';
import type { CreditRule, Meter, MeterDecision, RateLimitRule } from './meter.js';
import { checkBalance, checkCounter, checkCreditRule, checkKey, toDecision, windowMsOf } from './rules.js';

type RedisClient = ReturnType<typeof createClient>;

export interface RedisMeterOptions {
  url: string;
  /** Prefix for every key, joined with `:`. */
  namespace?: string;
  /** Longest wait for a TCP connection, first or re-established. */
  connectTimeoutMs?: number;
  /** Longest wait for one call's reply; node-redis itself waits forever once a command is written. */
  commandTimeoutMs?: number;
  /** Background reconnect attempts back off up to this delay and never stop. */
  maxReconnectDelayMs?: number;
}

/** Server replies that mean "not now" rather than "wrong request". */
const TRANSIENT_REPLIES = ['LOADING', 'BUSY', 'OOM', 'READONLY', 'MASTERDOWN', 'CLUSTERDOWN', 'TRYAGAIN', 'NOREPLICAS'];

/** Calls abandoned at their deadline stay queued until the server answers; past this many, new calls fail at once. */
const MAX_QUEUED_COMMANDS = 10_000;

type ScriptReply = [allowed: number, refused: number, remaining: number, resetMs: number, balance: number];

export class RedisMeter implements Meter {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #commandTimeoutMs: number;
  #scriptSha = '';
  /** False until the first connection and script load succeed; decides whether a lost connection is retried. */
  #opened = false;
  /** The latest connection failure, so `unavailable` says why rather than just "offline". */
  #lastConnectionError: Error | undefined;
  #closed = false;

  /**
   * Connects, loads the check script and resolves; rejects with `unavailable` if Redis
   * cannot be reached now. Once open, outages fail calls fast and reconnect in the background.
   */
  static async open(options: RedisMeterOptions): Promise<RedisMeter> {
    const meter = new RedisMeter(options);
    try {
      await meter.#client.connect();
      meter.#scriptSha = await meter.#client.scriptLoad(CHECK_SCRIPT);
      meter.#opened = true;
    } catch (error) {
      meter.#client.destroy();
      throw meter.#domainError(error);
    }
    return meter;
  }

  private constructor(options: RedisMeterOptions) {
    this.#prefix = options.namespace ? `${options.namespace}:` : '';
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 2_000;
    const maxDelay = options.maxReconnectDelayMs ?? 2_000;
    this.#client = createClient({
      url: options.url,
      // Calls made while disconnected fail at once instead of piling up until Redis returns.
      disableOfflineQueue: true,
      commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
      socket: {
        connectTimeout: options.connectTimeoutMs ?? 2_000,
        // Before the first connection a failure ends `open`; after it, retrying never stops.
        reconnectStrategy: (retries, cause) =>
          this.#opened ? Math.min(maxDelay, 50 * 2 ** Math.min(retries, 10)) + Math.floor(Math.random() * 50) : cause,
      },
    });
    // Without a listener node-redis would throw these out of the event loop; calls report them instead.
    this.#client.on('error', (error: Error) => {
      this.#lastConnectionError = error;
    });
    this.#client.on('ready', () => {
      this.#lastConnectionError = undefined;
    });
  }

  async check(rate: RateLimitRule, credit?: CreditRule): Promise<MeterDecision> {
    const windowMs = windowMsOf(rate);
    if (credit) checkCreditRule(credit);
    const keys = [this.#key(rate.key)];
    const args = [String(rate.limit), String(windowMs)];
    if (credit) {
      keys.push(this.#key(credit.key));
      args.push(String(credit.cost), String(credit.allowance), String(credit.ttlSeconds));
    }
    const [allowed, refused, remaining, resetMs, balance] = await this.#call(() => this.#runCheck(keys, args));
    const refusedBy = refused === 1 ? 'rate' : refused === 2 ? 'credits' : undefined;
    return toDecision({ allowed: allowed === 1, refusedBy, remaining, resetMs, balance }, rate, credit);
  }

  async #runCheck(keys: string[], args: string[]): Promise<ScriptReply> {
    try {
      return (await this.#client.evalSha(this.#scriptSha, { keys, arguments: args })) as ScriptReply;
    } catch (error) {
      // A restarted or flushed server forgot the script; EVAL runs it and caches it again.
      if (!(error instanceof ErrorReply && error.message.startsWith('NOSCRIPT'))) throw error;
      return (await this.#client.eval(CHECK_SCRIPT, { keys, arguments: args })) as ScriptReply;
    }
  }

  async refund(rateKey: string, credit?: { key: string; cost: number }): Promise<number | null> {
    checkKey(rateKey);
    const keys = [this.#key(rateKey)];
    const args: string[] = [];
    if (credit) {
      checkKey(credit.key);
      keys.push(this.#key(credit.key));
      args.push(String(credit.cost));
    }
    // Refunds are rare (refused requests only), so the script is sent whole rather than cached.
    const balance = await this.#call(() => this.#client.eval(REFUND_SCRIPT, { keys, arguments: args }));
    return typeof balance === 'number' ? balance : null;
  }

  async creditBalance(key: string): Promise<number | null> {
    checkKey(key);
    const value = await this.#call(() => this.#client.get(this.#key(key)));
    return value === null ? null : Number(value);
  }

  async setCreditBalance(key: string, balance: number, ttlSeconds: number): Promise<void> {
    checkBalance(key, balance, ttlSeconds);
    await this.#call(() => this.#client.set(this.#key(key), String(balance), { expiration: { type: 'EX', value: ttlSeconds } }));
  }

  async increment(key: string, ttlSeconds: number): Promise<number> {
    checkCounter(key, ttlSeconds);
    const redisKey = this.#key(key);
    // EXPIRE NX starts the clock on the first increment only, in the same round trip.
    const [value] = await this.#call(() => this.#client.multi().incr(redisKey).expire(redisKey, ttlSeconds, 'NX').exec());
    return Number(value);
  }

  async ping(): Promise<void> {
    await this.#call(() => this.#client.ping());
  }

  /** Lets calls in flight finish, but waits no longer than one call's deadline for a server that stopped answering. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#client.isReady) {
      this.#client.destroy();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.#client.close().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.#commandTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (!drained) this.#client.destroy();
  }

  #key(key: string): string {
    return this.#prefix + key;
  }

  /** Runs one call against a deadline; a check abandoned this way may still have spent on the server. */
  async #call<T>(command: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new AppError('unavailable', 'The meter is closed.');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no reply within ${this.#commandTimeoutMs} ms`)), this.#commandTimeoutMs);
    });
    const reply = command();
    // The late outcome of an abandoned call must not surface as an unhandled rejection.
    reply.catch(() => undefined);
    try {
      return await Promise.race([reply, deadline]);
    } catch (error) {
      throw this.#domainError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every Redis failure becomes a domain error here; only a reply that blames the request is `internal`. */
  #domainError(error: unknown): AppError {
    if (isAppError(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ErrorReply && !TRANSIENT_REPLIES.some((code) => message.startsWith(code))) {
      return new AppError('internal', `Redis meter: ${message}`);
    }
    const cause = this.#lastConnectionError?.message;
    return new AppError('unavailable', `Redis meter unavailable: ${message}${cause && cause !== message ? ` (${cause})` : ''}`);
  }
}
