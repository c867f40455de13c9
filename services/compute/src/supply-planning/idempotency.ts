/**
 * Idempotency keys of POST /supply-plans/generate (DECISIONS section 6), kept in compute's own
 * database: per tenant, 24 hours from first use. The first request claims the key and its
 * answer is stored; the same request again replays that answer, another request with the key
 * is a 422 on `Idempotency-Key`, a repeat while the first is still working a 409. A first
 * request that fails releases the key, so the client may retry with it.
 * (Same rules as workflows' sync keys, which store a different answer type.)
 */
import { createHash } from 'node:crypto';
import { AppError, ConflictError, ValidationError, type Collection, type Doc, type Store } from '@supply/kit';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim this old that never answered belonged to a process that died. */
const IN_FLIGHT_TTL_MS = 15 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

interface KeyDoc extends Doc {
  _id: string;
  tenant: string;
  fingerprint: string;
  state: 'in_flight' | 'done';
  answer: unknown;
  claimed_at: number;
  expires_at: number;
}

export type Claim<A> = { kind: 'claimed'; id: string } | { kind: 'replay'; answer: A };

export const fingerprintOf = (request: unknown) => createHash('sha256').update(JSON.stringify(request)).digest('hex');

export class IdempotencyKeys<A> {
  private constructor(
    private readonly keys: Collection<KeyDoc>,
    private readonly codec: { toJSON(answer: A): unknown; fromJSON(json: unknown): A },
  ) {}

  static async open<A>(store: Store, name: string, codec: { toJSON(answer: A): unknown; fromJSON(json: unknown): A }): Promise<IdempotencyKeys<A>> {
    const keys = await store.collection<KeyDoc>({ name, indexes: [{ name: 'expires_at', keys: [['expires_at', 1]] }] });
    return new IdempotencyKeys(keys, codec);
  }

  async claim(tenant: string, key: string, fingerprint: string, now = Date.now()): Promise<Claim<A>> {
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError({ 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] });
    }
    const id = `${tenant}:${key}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.keys.insertOne({ _id: id, tenant, fingerprint, state: 'in_flight', answer: null, claimed_at: now, expires_at: now + KEY_TTL_MS });
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
      if (existing.fingerprint !== fingerprint) {
        throw new ValidationError({
          'Idempotency-Key': ['The Idempotency-Key was already used with a different request; use a new key for a new request.'],
        });
      }
      if (existing.state === 'in_flight') {
        throw new ConflictError('A request with this Idempotency-Key is still being processed; retry once it has been answered.');
      }
      return { kind: 'replay', answer: this.codec.fromJSON(existing.answer) };
    }
    throw new AppError('unavailable', 'The Idempotency-Key could not be claimed; retry.');
  }

  async complete(id: string, answer: A): Promise<void> {
    await this.keys.updateOne({ _id: id, state: 'in_flight' }, { $set: { state: 'done', answer: this.codec.toJSON(answer) } });
  }

  async release(id: string): Promise<void> {
    await this.keys.deleteOne({ _id: id, state: 'in_flight' });
  }

  /** Forgets keys past their 24 hours. */
  sweep(now = Date.now()): Promise<number> {
    return this.keys.deleteMany({ expires_at: { $lte: now } });
  }
}
