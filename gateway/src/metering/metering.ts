import type { Request, Response } from 'express';
import { isAppError, type Logger, type Meter, type MeterDecision, type RateLimitRule } from '@supply/kit';
import { creditKey, creditPeriodOf, creditTtlSeconds, type CreditPeriod } from '@supply/contracts';
import type { Guard } from '../app';
import type { Principal } from '../auth/guard';
import { problem } from '../http/errors';
import { COSTS, type RouteDef } from '../http/routes';
import { LocalLimiter } from './local-limiter';
import type { MeteredUse } from './usage-recorder';
import type { TenantPolicies } from './policies';

/** What the meter decided for a request, for handlers that show it (GET /credits). */
export interface MeteredRequest {
  cost: number;
  period: CreditPeriod;
  /** The balance after this request; null when the meter could not be asked. */
  balance: number | null;
  /** The rate window this request took a slot of, and what the answer said of it. */
  rule: RateLimitRule;
  rate: MeterDecision['rate'];
  /** Set once the request was refused after metering and its spend given back. */
  refunded?: boolean;
}

/** The metering step and its undo for requests refused after it: a request refused for any reason spends nothing. */
export interface MeteringHooks {
  hook: Guard;
  refund: Guard;
}

export interface MeteringOptions {
  meter: Meter;
  policies: TenantPolicies;
  /** Counts a metered request for the bus without the answer waiting for it. */
  record(use: MeteredUse): void;
  logger: Logger;
  now(): Date;
  /** Per-token ceiling on legacy endpoints: they spend no credits, so only this bounds their abuse. */
  legacyCeiling?: { limit: number; windowSeconds: number };
  /** Stands in for the meter's rate windows while it is unreachable. */
  fallback?: LocalLimiter;
  /** After a meter failure requests skip it this long; then one tries it again. */
  retryMeterAfterMs?: number;
  /** Monotonic milliseconds. */
  clock?: () => number;
}

/** `Retry-After` of the 503 answered while credits cannot be spent. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2;
const LEGACY_CEILING = { limit: 600, windowSeconds: 60 };
const PREFIX = /^\/:tenant\/api\/v1/;

/** The route pattern as usage shows it: `/:tenant/api/v1/items/:id` is `/items/{id}`. */
export function endpointOf(path: string): string {
  return path.replace(PREFIX, '').replace(/:([A-Za-z0-9_]+)/g, '{$1}') || '/';
}

/** endpointOf once per route pattern (the patterns are the app's routes, a fixed few dozen). */
const endpoints = new Map<string, string>();
function endpointOfRoute(path: string): string {
  let endpoint = endpoints.get(path);
  if (endpoint === undefined) endpoints.set(path, (endpoint = endpointOf(path)));
  return endpoint;
}

function setRateHeaders(res: Response, rule: RateLimitRule, rate: MeterDecision['rate']): void {
  res.setHeader('RateLimit-Policy', `"default";q=${rule.limit};w=${rule.windowSeconds}`);
  res.setHeader('RateLimit', `"default";r=${rate.remaining};t=${rate.resetSeconds}`);
}

function rateLimited(rule: RateLimitRule, rate: MeterDecision['rate']) {
  return problem(
    'rate-limited',
    `This token may make ${rule.limit} requests per ${rule.windowSeconds} seconds; retry in ${rate.resetSeconds} seconds.`,
    { headers: { 'Retry-After': String(rate.resetSeconds) } },
  );
}

/**
 * Knows whether the meter is reachable. The first failure starts an outage (logged once);
 * during it requests go straight to the fallback, except one every `retryMs` that tries
 * the meter again; the first success ends it (logged once).
 */
class MeterOutage {
  #down = false;
  #since = 0;
  #retryAt = 0;
  #fallbackAnswers = 0;

  constructor(
    private readonly logger: Logger,
    private readonly retryMs: number,
    private readonly clock: () => number,
  ) {}

  shouldTry(): boolean {
    return !this.#down || this.clock() >= this.#retryAt;
  }

  failed(err: unknown): void {
    const now = this.clock();
    if (!this.#down) {
      this.#down = true;
      this.#since = now;
      this.#fallbackAnswers = 0;
      this.logger.warn(
        { err },
        'meter unavailable: rate limits fall back to this process, requests that cost credits answer 503 until it returns',
      );
    }
    this.#retryAt = now + this.retryMs;
  }

  fellBack(): void {
    this.#fallbackAnswers++;
  }

  succeeded(): void {
    if (!this.#down) return;
    this.#down = false;
    this.logger.info(
      { outage_ms: Math.round(this.clock() - this.#since), fallback_answers: this.#fallbackAnswers },
      'meter reachable again',
    );
  }
}

/**
 * The metering step, run after authentication, both gates and request validation, and
 * before the handler: so a refused request never spends. One meter call checks the token's
 * rate window and spends the tenant's credits together; the answer carries `RateLimit`,
 * `RateLimit-Policy` and `Credits-Remaining`, whatever the handler then answers. Once this
 * step passes the request is charged, and its usage record is sent when the answer is done.
 */
export function createMeteringHook(options: MeteringOptions): MeteringHooks {
  const { meter, policies, logger, now } = options;
  const clock = options.clock ?? (() => performance.now());
  const fallback = options.fallback ?? new LocalLimiter({ clock });
  const outage = new MeterOutage(logger, options.retryMeterAfterMs ?? 1_000, clock);
  const legacyCeiling = options.legacyCeiling ?? LEGACY_CEILING;
  let current = creditPeriodOf(now());
  /** The credit period of an instant; computed afresh only when the month changes. */
  const periodOf = (at: Date): CreditPeriod => {
    const t = at.getTime();
    if (t < current.start.getTime() || t >= current.end.getTime()) current = creditPeriodOf(at);
    return current;
  };

  /** One meter call, or undefined while the meter is unreachable. */
  async function ask(rule: RateLimitRule, credit?: Parameters<Meter['check']>[1]): Promise<MeterDecision | undefined> {
    if (!outage.shouldTry()) return undefined;
    try {
      const decision = await meter.check(rule, credit);
      outage.succeeded();
      return decision;
    } catch (err) {
      if (!(isAppError(err) && err.code === 'unavailable')) throw err;
      outage.failed(err);
      return undefined;
    }
  }

  function fallBack(rule: RateLimitRule): { allowed: boolean; rate: MeterDecision['rate'] } {
    outage.fellBack();
    return fallback.check(rule);
  }

  function recordWhenDone(res: Response, route: RouteDef, principal: Principal, at: Date): void {
    res.once('close', () =>
      options.record({
        tenant: principal.tenant,
        token_id: principal.token_id,
        method: route.method.toUpperCase(),
        endpoint: endpointOfRoute(route.path),
        // A refunded request shows with cost 0, so recorded use still adds up to the balance.
        cost: (res.locals.metering as MeteredRequest | undefined)?.cost ?? 0,
        // An answer never finished means the client went away first.
        status: res.writableFinished ? res.statusCode : 499,
        at,
      }),
    );
  }

  const hook: Guard = async (route: RouteDef, _req: Request, res: Response) => {
    const access = route.access;
    if (access.kind === 'none') return;
    const principal: Principal = res.locals.principal;
    const at = now();

    if (access.kind === 'legacy') {
      // No credits and no RateLimit fields; only the abuse ceiling.
      const rule = { key: `rl-legacy:${principal.tenant}:${principal.token_id}`, ...legacyCeiling };
      const decision = (await ask(rule)) ?? fallBack(rule);
      if (!decision.allowed) throw rateLimited(rule, decision.rate);
      recordWhenDone(res, route, principal, at);
      return;
    }

    const cost = COSTS[access.cost];
    const period = periodOf(at);
    const cached = policies.policy(principal.tenant, period.key);
    const { limits, seed } = cached instanceof Promise ? await cached : cached;
    const rule = { key: `rl:${principal.tenant}:${principal.token_id}`, limit: limits.rateLimit, windowSeconds: limits.rateWindowSeconds };
    const decision = await ask(rule, {
      key: creditKey(principal.tenant, period),
      cost,
      allowance: seed,
      ttlSeconds: creditTtlSeconds(period, at),
    });

    if (!decision) {
      // Credits cannot be spent without the meter, and are never given away.
      if (cost > 0) {
        throw problem('service-unavailable', 'Credits cannot be checked right now; retry shortly.', {
          headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) },
        });
      }
      const local = fallBack(rule);
      setRateHeaders(res, rule, local.rate);
      if (!local.allowed) throw rateLimited(rule, local.rate);
      // Only free requests get here, and the local window has no refund: nothing to give back.
      res.locals.metering = { cost, period, balance: null, rule, rate: local.rate, refunded: true } satisfies MeteredRequest;
      recordWhenDone(res, route, principal, at);
      return;
    }

    const balance = decision.credits!.remaining;
    setRateHeaders(res, rule, decision.rate);
    res.setHeader('Credits-Remaining', String(Math.max(0, balance)));
    policies.observe(principal.tenant, period.key, balance);
    if (decision.refusedBy === 'rate') throw rateLimited(rule, decision.rate);
    if (decision.refusedBy === 'credits') {
      throw problem(
        'credits-exhausted',
        `This workspace's credits for ${period.key} are spent (this request costs ${cost}, ${Math.max(0, balance)} remain); they renew on ${period.end.toISOString().slice(0, 10)}.`,
      );
    }
    res.locals.metering = { cost, period, balance, rule, rate: decision.rate } satisfies MeteredRequest;
    recordWhenDone(res, route, principal, at);
  };

  /** Gives back the rate slot and the credits of a request its handler then refused, and says so in its headers. */
  const refund: Guard = async (_route: RouteDef, _req: Request, res: Response) => {
    const metered = res.locals.metering as MeteredRequest | undefined;
    const principal: Principal | undefined = res.locals.principal;
    if (!metered || metered.refunded || !principal) return;
    metered.refunded = true;
    const { cost, period, rule, rate } = metered;
    try {
      const balance = await meter.refund(rule.key, cost > 0 ? { key: creditKey(principal.tenant, period), cost } : undefined);
      metered.cost = 0;
      if (res.headersSent) return;
      res.setHeader('RateLimit', `"default";r=${Math.min(rule.limit, rate.remaining + 1)};t=${rate.resetSeconds}`);
      if (balance !== null) res.setHeader('Credits-Remaining', String(Math.max(0, balance)));
    } catch (err) {
      // The request stays charged; losing one refund beats failing the answer.
      logger.warn({ err }, 'could not refund a refused request');
    }
  };

  return { hook, refund };
}
