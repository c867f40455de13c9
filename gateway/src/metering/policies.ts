import { subscribeWitnessed, type Bus, type Logger, type Subscription } from '@supply/kit';
import { ACCESS_CHANGED, type AccessChangedEvent } from '@supply/contracts';

/** A tenant's metering policy, as the tokens service keeps it. */
export interface TenantLimits {
  rateLimit: number;
  rateWindowSeconds: number;
  monthlyCredits: number;
}

/** What one metered request needs to know about its tenant. */
export interface MeteringPolicy {
  limits: TenantLimits;
  /** The balance the period starts at if the meter holds none for it. */
  seed: number;
}

export interface TenantPoliciesOptions {
  /** The tokens service's GetTenant. */
  fetchLimits(tenant: string): Promise<TenantLimits>;
  /** Credits the tokens service has recorded for the tenant in the period (`YYYY-MM`). */
  fetchUsed(tenant: string, period: string): Promise<number>;
  /** Cached limits and recorded use are refreshed in the background after this long. */
  ttlMs?: number;
  /** Monotonic milliseconds. */
  clock?: () => number;
}

/** A value fetched once, then refreshed in the background while it keeps being read. */
class Refreshed<T> {
  value: T | undefined;
  readonly ready: Promise<T>;
  #fetchedAt = 0;
  #refreshing = false;

  constructor(
    private readonly fetch: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly clock: () => number,
  ) {
    this.ready = fetch().then((value) => this.#store(value));
  }

  /** The value if it has arrived; starts a background refresh once it is older than the TTL. */
  current(): T | undefined {
    if (this.value !== undefined && !this.#refreshing && this.clock() - this.#fetchedAt >= this.ttlMs) {
      this.#refreshing = true;
      this.fetch().then(
        (value) => this.#store(value),
        () => (this.#refreshing = false),
      );
    }
    return this.value;
  }

  #store(value: T): T {
    this.value = value;
    this.#fetchedAt = this.clock();
    this.#refreshing = false;
    return value;
  }
}

interface PeriodState {
  used: Refreshed<number>;
  /** The lowest balance a check in this process reported for the period. */
  lowestSeen: number;
}

interface TenantState {
  limits: Refreshed<TenantLimits>;
  periods: Map<string, PeriodState>;
}

/**
 * Tenant limits and credit seeds, cached per gateway process and answered synchronously
 * once cached. Limits changed with the operator CLI reach every gateway as
 * `tokens.access-changed` without `user_id`, which drops the tenant here so the very next
 * request reads them again; a background refresh after `ttlMs` bounds a lost broadcast.
 *
 * The seed is what a balance the meter does not hold starts at (a new period, or a Redis
 * that lost its data): the allowance minus the credits recorded this period, or the lowest
 * balance this process has seen this period if that is lower (records still on their way).
 */
export class TenantPolicies {
  readonly #fetchLimits: (tenant: string) => Promise<TenantLimits>;
  readonly #fetchUsed: (tenant: string, period: string) => Promise<number>;
  readonly #ttlMs: number;
  readonly #clock: () => number;
  readonly #tenants = new Map<string, TenantState>();

  constructor(options: TenantPoliciesOptions) {
    this.#fetchLimits = options.fetchLimits;
    this.#fetchUsed = options.fetchUsed;
    this.#ttlMs = options.ttlMs ?? 60_000;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** The policy for a request in `period` (`YYYY-MM`): a value when cached, else a promise of it. */
  policy(tenant: string, period: string): MeteringPolicy | Promise<MeteringPolicy> {
    const state = this.#tenant(tenant);
    const periodState = this.#period(state, tenant, period);
    const limits = state.limits.current();
    const used = periodState.used.current();
    if (limits !== undefined && used !== undefined) return this.#policyOf(limits, used, periodState);
    return Promise.all([state.limits.ready, periodState.used.ready]).then(([l, u]) => this.#policyOf(l, u, periodState));
  }

  /** A balance a check reported; only ever lowers the seed. */
  observe(tenant: string, period: string, balance: number): void {
    const state = this.#tenants.get(tenant)?.periods.get(period);
    if (state && balance < state.lowestSeen) state.lowestSeen = balance;
  }

  /** Drops what is cached about the tenant. */
  forget(tenant: string): void {
    this.#tenants.delete(tenant);
  }

  /** Follows tenant-wide access changes (limits among them) until the subscription is closed. */
  follow(bus: Bus, logger: Logger): Promise<Subscription> {
    return subscribeWitnessed<AccessChangedEvent>(
      bus,
      ACCESS_CHANGED,
      (event) => {
        if (event.user_id === undefined) this.forget(event.tenant);
      },
      logger,
      // A limit change may have been missed while the bus was away.
      { onGap: () => this.#tenants.clear() },
    );
  }

  #policyOf(limits: TenantLimits, used: number, state: PeriodState): MeteringPolicy {
    return { limits, seed: Math.max(0, Math.min(limits.monthlyCredits - used, state.lowestSeen)) };
  }

  #tenant(tenant: string): TenantState {
    let state = this.#tenants.get(tenant);
    if (!state) {
      const created: TenantState = {
        limits: new Refreshed(() => this.#fetchLimits(tenant), this.#ttlMs, this.#clock),
        periods: new Map(),
      };
      this.#tenants.set(tenant, created);
      // A failed first lookup is not kept: the next request asks again.
      created.limits.ready.catch(() => this.#drop(tenant, created));
      state = created;
    }
    return state;
  }

  #period(state: TenantState, tenant: string, period: string): PeriodState {
    let periodState = state.periods.get(period);
    if (!periodState) {
      // Requests straddling a month end may ask for two periods; none older is kept.
      if (state.periods.size >= 2) state.periods.delete(state.periods.keys().next().value!);
      const created: PeriodState = {
        used: new Refreshed(() => this.#fetchUsed(tenant, period), this.#ttlMs, this.#clock),
        lowestSeen: Number.POSITIVE_INFINITY,
      };
      state.periods.set(period, created);
      created.used.ready.catch(() => {
        if (state.periods.get(period) === created) state.periods.delete(period);
      });
      periodState = created;
    }
    return periodState;
  }

  #drop(tenant: string, state: TenantState): void {
    if (this.#tenants.get(tenant) === state) this.#tenants.delete(tenant);
  }
}
