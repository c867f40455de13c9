import { hash } from 'node:crypto';
import { subscribeWitnessed, type Bus, type Logger, type Subscription } from '@supply/kit';
import { ACCESS_CHANGED, TOKEN_REVOKED, type AccessChangedEvent, type supply_tokens_v1, type TokenRevokedEvent } from '@supply/contracts';

export type Principal = supply_tokens_v1.Principal;

export interface PrincipalCacheOptions {
  /** The tokens service's Authenticate call. */
  fetch(token: string): Promise<Principal>;
  /** Safety net for a lost broadcast; revocations normally arrive over the bus at once. */
  ttlMs?: number;
  maxEntries?: number;
  /** Monotonic milliseconds. */
  clock?: () => number;
}

interface Entry {
  principal: Principal;
  storedAt: number;
}

/**
 * Authenticated principals by sha256 of the bearer value (never the value itself), for a
 * short TTL. The tokens service broadcasts revocations and level, admin and module changes;
 * each gateway drops the affected entries, so the very next request asks the service again.
 */
export class PrincipalCache {
  readonly #fetch: (token: string) => Promise<Principal>;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #clock: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a lookup that started before one must not store its answer. */
  #generation = 0;

  constructor(options: PrincipalCacheOptions) {
    this.#fetch = options.fetch;
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#clock = options.clock ?? (() => performance.now());
  }

  get size(): number {
    return this.#entries.size;
  }

  authenticate = async (token: string): Promise<Principal> => {
    const key = hash('sha256', token, 'base64');
    const hit = this.#entries.get(key);
    if (hit && this.#clock() - hit.storedAt < this.#ttlMs) return hit.principal;
    if (hit) this.#entries.delete(key);
    const generation = this.#generation;
    const principal = await this.#fetch(token);
    if (generation === this.#generation) {
      if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(key, { principal, storedAt: this.#clock() });
    }
    return principal;
  };

  forgetToken(tenant: string, tokenId: number): void {
    this.#forget((p) => p.tenant === tenant && p.token_id === tokenId);
  }

  /** A user's levels or admin flag changed, or (without `userId`) the whole tenant. */
  forgetAccess(tenant: string, userId?: number): void {
    this.#forget((p) => p.tenant === tenant && (userId === undefined || p.user_id === userId));
  }

  /** Follows the tokens service's broadcasts until the subscriptions are closed. */
  async follow(bus: Bus, logger: Logger): Promise<Subscription[]> {
    return Promise.all([
      subscribeWitnessed<TokenRevokedEvent>(bus, TOKEN_REVOKED, (e) => this.forgetToken(e.tenant, e.token_id), logger, {
        onGap: () => this.forgetAll(),
      }),
      subscribeWitnessed<AccessChangedEvent>(bus, ACCESS_CHANGED, (e) => this.forgetAccess(e.tenant, e.user_id), logger, {
        onGap: () => this.forgetAll(),
      }),
    ]);
  }

  /** Drops every principal (broadcasts may have been missed while the bus was away). */
  forgetAll(): void {
    this.#forget(() => true);
  }

  #forget(matches: (p: Principal) => boolean): void {
    this.#generation++;
    for (const [key, entry] of this.#entries) if (matches(entry.principal)) this.#entries.delete(key);
  }
}
