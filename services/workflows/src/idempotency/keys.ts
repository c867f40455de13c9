/**
 * Idempotency keys: per tenant and user, kept 24 hours from first use.
 * Every token of one user shares the user's keys; another user's same key is another key,
 * so no user is ever answered with what another user's request got. The
 * first request with a key claims it; its successful answer is stored and replayed to a
 * repeat with the same request fingerprint. Another fingerprint is a 422 on
 * `Idempotency-Key`; a repeat while the first is still being answered is a 409. A first
 * request that fails releases its key, so the client may retry with it.
 *
 * One collection for every kind of request: syncs and imports store their SyncAnswer
 * (sync/service.ts), callers that answer themselves store an HTTP answer through the
 * Claim/Complete/ReleaseIdempotencyKey RPCs (answers.ts). The class keeps the answer as
 * opaque JSON; each user encodes and decodes its own. Fingerprints of different kinds never
 * coincide, so a key reused across kinds is the 422 of "another request".
 */
import { randomUUID } from 'node:crypto';
import { AppError, ConflictError, ValidationError, type CallContext, type Collection, type Doc, type Store } from '@supply/kit';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim this old whose request never answered belonged to a process that died. */
export const IN_FLIGHT_TTL_MS = 15 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Whose key it is: one user of one tenant. */
export interface KeyOwner {
  tenant: string;
  userId: number;
}

/** The owner of the keys a call uses: the user of the token it acts for (the gateway's x-principal). */
export function keyOwnerOf(ctx: CallContext): KeyOwner {
  const tenant = ctx.requireTenant();
  const principal = ctx.principal;
  if (!principal || principal.tenant !== tenant || !Number.isSafeInteger(principal.userId)) {
    throw new AppError(
      'unauthenticated',
      'An Idempotency-Key belongs to a user: this call needs the x-principal of the token it acts for.',
    );
  }
  return { tenant, userId: principal.userId };
}

/** The document id of `key` for `owner`: the tenant and the user scope it. */
export function keyIdOf(owner: KeyOwner, key: string): string {
  return `${owner.tenant}:${owner.userId}:${key}`;
}

export interface IdempotencyDoc extends Doc {
  _id: string;
  tenant: string;
  user_id: number;
  key: string;
  /** Null while a streamed request is still arriving (its fingerprint is known at its end). */
  fingerprint: string | null;
  state: 'in_flight' | 'done';
  /** The stored answer as JSON (see the file comment); null while in flight. */
  answer: unknown;
  /** Names the claim holding the key, so a late complete or release of an abandoned claim cannot touch its successor. */
  claim_id?: string;
  claimed_at: number;
  expires_at: number;
}

/** A claim this caller holds: the key's document and the claim's own name. */
export interface HeldClaim {
  id: string;
  claimId: string;
}

/**
 * What an abandoned claim's request left behind, if anything: the answer it would have kept
 * (and its fingerprint, which a stream's claim does not know). Null when it created nothing.
 */
export type RecoverAbandoned = (claimId: string) => Promise<{ answer: unknown; fingerprint: string } | null>;

export type Claim =
  | ({ kind: 'claimed' } & HeldClaim)
  /** Used before with this fingerprint: the stored answer (JSON) to give again. */
  | { kind: 'replay'; answer: unknown }
  /** Used before, fingerprint to be compared once the streamed request is read. */
  | { kind: 'check'; fingerprint: string; answer: unknown };

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

  /**
   * Claims `key`, or says how to answer a repeat. `fingerprint` null: not known yet (a stream).
   * A claim in flight for longer than IN_FLIGHT_TTL_MS was abandoned (its process died, or its
   * answer could not be kept): `recover` says whether its request created something anyway (a
   * job), whose answer the key then keeps and replays; otherwise the key is claimed afresh.
   */
  async claim(owner: KeyOwner, key: string, fingerprint: string | null, now = Date.now(), recover?: RecoverAbandoned): Promise<Claim> {
    IdempotencyKeys.validate(key);
    const id = keyIdOf(owner, key);
    for (let attempt = 0; attempt < 5; attempt++) {
      const claimId = randomUUID();
      try {
        await this.keys.insertOne({
          _id: id,
          tenant: owner.tenant,
          user_id: owner.userId,
          key,
          fingerprint,
          state: 'in_flight',
          answer: null,
          claim_id: claimId,
          claimed_at: now,
          expires_at: now + KEY_TTL_MS,
        });
        return { kind: 'claimed', id, claimId };
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
      }
      let existing = await this.keys.findById(id);
      if (!existing) continue;
      const abandoned = existing.state === 'in_flight' && existing.claimed_at + IN_FLIGHT_TTL_MS < now;
      if (abandoned && existing.expires_at > now && existing.claim_id && recover) {
        const left = await recover(existing.claim_id);
        if (left) {
          // Another caller moved the key meanwhile: read it again.
          if (!(await this.complete({ id, claimId: existing.claim_id }, left.answer, left.fingerprint))) continue;
          existing = { ...existing, state: 'done', answer: left.answer, fingerprint: left.fingerprint };
        }
      }
      if (existing.expires_at <= now || (existing.state === 'in_flight' && abandoned)) {
        await this.keys.deleteOne({ _id: id, claimed_at: existing.claimed_at });
        continue;
      }
      if (existing.state === 'in_flight') {
        throw new ConflictError('A request with this Idempotency-Key is still being processed; retry once it has been answered.');
      }
      if (fingerprint === null) return { kind: 'check', fingerprint: existing.fingerprint ?? '', answer: existing.answer };
      IdempotencyKeys.assertSame(existing.fingerprint, fingerprint);
      return { kind: 'replay', answer: existing.answer };
    }
    throw new AppError('unavailable', 'The Idempotency-Key could not be claimed; retry.');
  }

  /** A used key reached with another request: 422 on the header. */
  static assertSame(stored: string | null, fingerprint: string): void {
    if (stored !== fingerprint) throw IdempotencyKeys.usedForAnotherRequest();
  }

  static usedForAnotherRequest(): ValidationError {
    return new ValidationError({
      'Idempotency-Key': ['The Idempotency-Key was already used with a different request; use a new key for a new request.'],
    });
  }

  /**
   * Keeps `answer` (JSON) for a claim still held; true when it was kept. `fingerprint`: the
   * request's, when the claim could not know it yet (a stream); else the claim's stands.
   */
  async complete(claim: HeldClaim, answer: unknown, fingerprint?: string): Promise<boolean> {
    const result = await this.keys.updateOne(
      { _id: claim.id, state: 'in_flight', claim_id: claim.claimId },
      { $set: { state: 'done', answer, ...(fingerprint === undefined ? {} : { fingerprint }) } },
    );
    return result.matched > 0;
  }

  /** Frees the key of a claim still held (its request failed). */
  async release(claim: HeldClaim): Promise<void> {
    await this.keys.deleteOne({ _id: claim.id, state: 'in_flight', claim_id: claim.claimId });
  }

  /** Forgets keys past their 24 hours. */
  async sweep(now = Date.now()): Promise<number> {
    return this.keys.deleteMany({ expires_at: { $lte: now } });
  }
}
