/**
 * Idempotency keys of compute requests (DECISIONS section 6): per tenant, kept 24 hours
 * from first use. The first request with a key claims it and its answer is stored; a
 * repeat with the same request gets that answer again, one with another request is a 422
 * on `Idempotency-Key`, one while the first is still being answered a 409. A first request
 * that fails releases its key so the client may retry with it.
 */
import { createHash } from 'node:crypto';
import { AppError, ConflictError, ValidationError, type Collection, type Doc, type Store } from '@supply/kit';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim this old whose request never answered belonged to a process that died. */
const IN_FLIGHT_TTL_MS = 5 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

interface KeyDoc extends Doc {
  /** `<tenant>:<key>` */
  _id: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  answer: unknown;
  claimed_at: number;
  expires_at: number;
}

export type Claim<A> = { kind: 'claimed'; id: string } | { kind: 'replay'; answer: A };

/** A stable digest of a request: the same fields and values give the same fingerprint. */
export function fingerprintOf(request: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]))
        : value;
  return createHash('sha256').update(JSON.stringify(canonical(request))).digest('hex');
}

/** The keys of one kind of request, answered with `A` (stored as JSON), in their own collection. */
export class IdempotencyKeys<A> {
  private constructor(private readonly keys: Collection<KeyDoc>) {}

  static async open<A>(store: Store, collection: string): Promise<IdempotencyKeys<A>> {
    const keys = await store.collection<KeyDoc>({ name: collection, indexes: [{ name: 'expires_at', keys: [['expires_at', 1]] }] });
    return new IdempotencyKeys<A>(keys);
  }

  /** Claims `key` for this request, or hands back the answer to replay. */
  async claim(tenant: string, key: string, fingerprint: string, now = Date.now()): Promise<Claim<A>> {
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError({ 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] });
    }
    const id = `${tenant}:${key}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.keys.insertOne({ _id: id, fingerprint, state: 'in_flight', answer: null, claimed_at: now, expires_at: now + KEY_TTL_MS });
        return { kind: 'claimed', id };
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
      const existing = await this.keys.findById(id);
      if (!existing) continue;
      if (existing.expires_at <= now || (existing.state === 'in_flight' && existing.claimed_at + IN_FLIGHT_TTL_MS < now)) {
        await this.keys.deleteOne({ _id: id, claimed_at: existing.claimed_at });
        continue;
      }
      if (existing.state === 'in_flight') {
        throw new ConflictError('A request with this Idempotency-Key is still being processed; retry once it has been answered.');
      }
      if (existing.fingerprint !== fingerprint) {
        throw new ValidationError({
          'Idempotency-Key': ['The Idempotency-Key was already used with a different request; use a new key for a new request.'],
        });
      }
      return { kind: 'replay', answer: existing.answer as A };
    }
    throw new AppError('unavailable', 'The Idempotency-Key could not be claimed; retry.', { headers: { 'Retry-After': '1' } });
  }

  async complete(id: string, answer: A): Promise<void> {
    await this.keys.updateOne({ _id: id, state: 'in_flight' }, { $set: { state: 'done', answer } });
  }

  async release(id: string): Promise<void> {
    await this.keys.deleteOne({ _id: id, state: 'in_flight' });
  }

  /** Forgets keys past their 24 hours. */
  async sweep(now = Date.now()): Promise<number> {
    return this.keys.deleteMany({ expires_at: { $lte: now } });
  }
}
