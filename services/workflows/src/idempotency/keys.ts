/**
 * Idempotency keys (DECISIONS section 6): per tenant, kept 24 hours from first use. The
 * first request with a key claims it; its successful answer is stored and replayed to a
 * repeat with the same request fingerprint. Another fingerprint is a 422 on
 * `Idempotency-Key`; a repeat while the first is still being answered is a 409. A first
 * request that fails releases its key, so the client may retry with it.
 */
import { AppError, ConflictError, ValidationError, type Collection, type Doc, type Store } from '@supply/kit';
import { supply_workflows_v1 as pb } from '@supply/protos';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim this old whose request never answered belonged to a process that died. */
export const IN_FLIGHT_TTL_MS = 15 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyDoc extends Doc {
  _id: string;
  tenant: string;
  key: string;
  /** Null while a streamed request is still arriving (its fingerprint is known at its end). */
  fingerprint: string | null;
  state: 'in_flight' | 'done';
  /** The stored answer (SyncAnswer as JSON). */
  answer: unknown;
  claimed_at: number;
  expires_at: number;
}

export type Claim =
  | { kind: 'claimed'; id: string }
  | { kind: 'replay'; answer: pb.SyncAnswer }
  /** Used before, fingerprint to be compared once the streamed request is read. */
  | { kind: 'check'; fingerprint: string; answer: pb.SyncAnswer };

export class IdempotencyKeys {
  private constructor(private readonly keys: Collection<IdempotencyDoc>) {}

  static async open(store: Store): Promise<IdempotencyKeys> {
    const keys = await store.collection<IdempotencyDoc>({
      name: 'idempotency_keys',
      indexes: [{ name: 'expires_at', keys: [['expires_at', 1]] }],
    });
    return new IdempotencyKeys(keys);
  }

  static validate(key: string): void {
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError({ 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] });
    }
  }

  /** Claims `key`, or says how to answer a repeat. `fingerprint` null: not known yet (a stream). */
  async claim(tenant: string, key: string, fingerprint: string | null, now = Date.now()): Promise<Claim> {
    IdempotencyKeys.validate(key);
    const id = `${tenant}:${key}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.keys.insertOne({ _id: id, tenant, key, fingerprint, state: 'in_flight', answer: null, claimed_at: now, expires_at: now + KEY_TTL_MS });
        return { kind: 'claimed', id };
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
      const existing = await this.keys.findById(id);
      if (!existing) continue;
      const abandoned = existing.state === 'in_flight' && existing.claimed_at + IN_FLIGHT_TTL_MS < now;
      if (existing.expires_at <= now || abandoned) {
        await this.keys.deleteOne({ _id: id, claimed_at: existing.claimed_at });
        continue;
      }
      if (existing.state === 'in_flight') {
        throw new ConflictError('A request with this Idempotency-Key is still being processed; retry once it has been answered.');
      }
      const answer = pb.SyncAnswer.fromJSON(existing.answer);
      if (fingerprint === null) return { kind: 'check', fingerprint: existing.fingerprint ?? '', answer };
      IdempotencyKeys.assertSame(existing.fingerprint, fingerprint);
      return { kind: 'replay', answer: { ...answer, replayed: true } };
    }
    throw new AppError('unavailable', 'The Idempotency-Key could not be claimed; retry.');
  }

  /** A used key reached with another request: 422 on the header. */
  static assertSame(stored: string | null, fingerprint: string): void {
    if (stored !== fingerprint) {
      throw new ValidationError({
        'Idempotency-Key': ['The Idempotency-Key was already used with a different request; use a new key for a new request.'],
      });
    }
  }

  async complete(id: string, fingerprint: string, answer: pb.SyncAnswer): Promise<void> {
    await this.keys.updateOne({ _id: id, state: 'in_flight' }, { $set: { state: 'done', fingerprint, answer: pb.SyncAnswer.toJSON(answer) } });
  }

  async release(id: string): Promise<void> {
    await this.keys.deleteOne({ _id: id, state: 'in_flight' });
  }

  /** Forgets keys past their 24 hours. */
  async sweep(now = Date.now()): Promise<number> {
    return this.keys.deleteMany({ expires_at: { $lte: now } });
  }
}
