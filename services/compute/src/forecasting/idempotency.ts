/**
 * Idempotency keys of compute requests, kept by the workflows
 * service, which owns every key (ClaimIdempotencyKey and friends, workflows.proto): per
 * tenant and user (the x-principal's), 24 hours, one namespace with the keys of syncs and
 * of the gateway's own POSTs.
 * The first request with a key claims it and its answer is kept; a repeat with the same
 * request gets that answer again, one with another request is a 422 on `Idempotency-Key`,
 * one while the first is still being answered a 409. A first request that fails releases
 * its key so the client may retry with it.
 */
import { createHash } from 'node:crypto';
import type { Clients, Logger } from '@supply/kit';
import { supply_workflows_v1 as wpb } from '@supply/contracts';

export type Claim<A> = { kind: 'claimed'; key: string; claimId: string } | { kind: 'replay'; answer: A };

/** A stable digest of a request: the same fields and values give the same fingerprint. */
export function fingerprintOf(request: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
          )
        : value;
  return createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex');
}

export type KeyRpcs = Pick<Clients['workflows'], 'claimIdempotencyKey' | 'completeIdempotencyKey' | 'releaseIdempotencyKey'>;

/** How one kind of answer (a generated message) is kept as JSON. */
export interface AnswerCodec<A> {
  toJSON(answer: A): unknown;
  fromJSON(json: unknown): A;
}

/**
 * The keys of one kind of compute request, answered with `A`. Calls act for the tenant and
 * principal of the request being served (its handler's context), whose user owns the key.
 */
export class IdempotencyKeys<A> {
  constructor(
    private readonly rpcs: KeyRpcs,
    /** Tells this kind's fingerprints from every other's: `forecast`, `supply_plan`. */
    private readonly kind: string,
    private readonly codec: AnswerCodec<A>,
    private readonly logger: Logger,
  ) {}

  /** Claims `key` for this request, or hands back the answer to replay. */
  async claim(key: string, fingerprint: string): Promise<Claim<A>> {
    const claim = await this.rpcs.claimIdempotencyKey({ key, fingerprint: `${this.kind}:${fingerprint}` });
    if (claim.state === wpb.IdempotencyClaimState.IDEMPOTENCY_CLAIM_STATE_REPLAY && claim.answer) {
      return { kind: 'replay', answer: this.codec.fromJSON(JSON.parse(claim.answer.body_json)) };
    }
    return { kind: 'claimed', key, claimId: claim.claim_id };
  }

  /** Keeps the answer. Never throws: the work is done; unkept, the key stays claimed until it counts as abandoned (409s meanwhile, never a second run). */
  async complete(claim: Extract<Claim<A>, { kind: 'claimed' }>, answer: A): Promise<void> {
    try {
      await this.rpcs.completeIdempotencyKey({
        key: claim.key,
        claim_id: claim.claimId,
        // Status 0: a gRPC answer, no HTTP status of its own.
        answer: { status: 0, headers_json: '{}', body_json: JSON.stringify(this.codec.toJSON(answer)) },
      });
    } catch (err) {
      this.logger.warn({ err, kind: this.kind }, 'could not keep an idempotent answer');
    }
  }

  /** Frees the key of a request that failed. Never throws (an unreleased key frees itself once abandoned). */
  async release(claim: Extract<Claim<A>, { kind: 'claimed' }>): Promise<void> {
    await this.rpcs.releaseIdempotencyKey({ key: claim.key, claim_id: claim.claimId }).catch((err: unknown) => {
      this.logger.warn({ err, kind: this.kind }, 'could not release an Idempotency-Key');
    });
  }
}
