import { subscribeWitnessed, type Bus, type Logger, type Subscription } from '@supply/kit';
import { REFERENCE_CHANGED, type ReferenceChangedEvent } from '@supply/contracts';

/** One cached answer: the JSON body as sent and its entity tag. */
export interface CachedAnswer {
  body: string;
  etag: string;
}

interface Entry extends CachedAnswer {
  tenant: string;
  storedAt: number;
  bytes: number;
}

export interface ReferenceCacheOptions {
  /** Total body bytes kept; the least recently used answers go first. */
  maxBytes: number;
  /** No answer is served older than this, should an invalidation be lost. */
  ttlMs: number;
  /** Monotonic milliseconds. */
  clock?: () => number;
}

/**
 * Reference read answers per tenant and URL. Every reference write drops the tenant's answers:
 * the reference service pushes REFERENCE_CHANGED over the bus to every gateway, and the gateway
 * that carried the write drops them at once too. A read that started before a drop does not
 * store its (possibly older) answer: each tenant has a generation, moved on by every drop of the
 * tenant or of everything (a gap in the broadcasts).
 */
export class ReferenceCache {
  readonly #entries = new Map<string, Entry>();
  /** The drop count when each tenant was last dropped; `#allDroppedAt` when everything was. */
  readonly #droppedAt = new Map<string, number>();
  #drops = 0;
  #allDroppedAt = 0;
  readonly #maxBytes: number;
  readonly #ttlMs: number;
  readonly #clock: () => number;
  #bytes = 0;

  constructor(opts: ReferenceCacheOptions) {
    this.#maxBytes = opts.maxBytes;
    this.#ttlMs = opts.ttlMs;
    this.#clock = opts.clock ?? (() => performance.now());
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The tenant's current generation; pass it back to `set` so a drop in between discards the answer. */
  generation(tenant: string): number {
    return Math.max(this.#droppedAt.get(tenant) ?? 0, this.#allDroppedAt);
  }

  get(tenant: string, url: string): CachedAnswer | undefined {
    const key = keyOf(tenant, url);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#clock() - entry.storedAt >= this.#ttlMs) {
      this.#delete(key, entry);
      return undefined;
    }
    // Map order is the LRU order: a hit moves the entry to the young end.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  set(tenant: string, url: string, generation: number, answer: CachedAnswer): void {
    if (generation !== this.generation(tenant)) return;
    const bytes = Buffer.byteLength(answer.body) + url.length + 64;
    if (bytes > this.#maxBytes / 4) return;
    const key = keyOf(tenant, url);
    const old = this.#entries.get(key);
    if (old !== undefined) this.#delete(key, old);
    this.#entries.set(key, { ...answer, tenant, storedAt: this.#clock(), bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#delete(k, e);
    }
  }

  /** Drops every answer of the tenant (a reference write happened). */
  forgetTenant(tenant: string): void {
    this.#droppedAt.set(tenant, ++this.#drops);
    for (const [k, e] of this.#entries) if (e.tenant === tenant) this.#delete(k, e);
  }

  /** Drops every answer (broadcasts may have been missed while the bus was away). */
  forgetAll(): void {
    this.#allDroppedAt = ++this.#drops;
    this.#droppedAt.clear();
    this.#entries.clear();
    this.#bytes = 0;
  }

  /** Follows the reference service's change broadcasts until the subscription is closed. */
  follow(bus: Bus, logger: Logger): Promise<Subscription> {
    return subscribeWitnessed<ReferenceChangedEvent>(
      bus,
      REFERENCE_CHANGED,
      (e) => {
        if (typeof e?.tenant !== 'string') return;
        this.forgetTenant(e.tenant);
      },
      logger,
      { onGap: () => this.forgetAll() },
    );
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

function keyOf(tenant: string, url: string): string {
  return `${tenant}\n${url}`;
}
