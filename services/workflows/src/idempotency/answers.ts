/**
 * Claim/Complete/ReleaseIdempotencyKey (workflows.proto): Idempotency-Keys of requests
 * answered by their caller (the gateway's own POSTs, compute's generation requests), kept
 * in the same `idempotency_keys` collection as the keys of syncs, with the same 24 hours,
 * in-flight abandonment and owner (the tenant and user of the x-principal). The stored answer is an IdempotentAnswer as JSON, tagged so
 * it is never mistaken for a sync's answer.
 */
import { AppError, type CallContext } from '@supply/kit';
import { supply_workflows_v1 as pb } from '@supply/contracts';
import { IdempotencyKeys, keyIdOf, keyOwnerOf, type HeldClaim } from './keys';

const FINGERPRINT = /^[\x21-\x7e]{1,256}$/;
const CLAIM_ID = /^[0-9a-f-]{36}$/;
/** The stored form; `kind` tells it from a SyncAnswer (which has no `kind`). */
interface StoredAnswer {
  kind: 'answer';
  status: number;
  headers_json: string;
  body_json: string;
}

function isStoredAnswer(value: unknown): value is StoredAnswer {
  return typeof value === 'object' && value !== null && (value as StoredAnswer).kind === 'answer';
}

/** The headers to repeat: a JSON object of strings. */
function checkHeaders(json: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json || '{}');
  } catch {
    throw new AppError('invalid_argument', 'headers_json is not JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw new AppError('invalid_argument', 'headers_json is a JSON object of strings.');
  }
}

export class IdempotentAnswers {
  constructor(private readonly keys: IdempotencyKeys) {}

  async claim({ key, fingerprint }: pb.ClaimIdempotencyKeyRequest, ctx: CallContext): Promise<pb.ClaimIdempotencyKeyResponse> {
    const owner = keyOwnerOf(ctx);
    if (!FINGERPRINT.test(fingerprint)) throw new AppError('invalid_argument', 'A fingerprint is 1-256 visible ASCII characters.');
    const claim = await this.keys.claim(owner, key, fingerprint);
    if (claim.kind === 'claimed') {
      return { state: pb.IdempotencyClaimState.IDEMPOTENCY_CLAIM_STATE_CLAIMED, claim_id: claim.claimId, answer: undefined };
    }
    // `check` only comes from a null fingerprint; a stored sync answer has another fingerprint, so it never gets here.
    if (claim.kind !== 'replay' || !isStoredAnswer(claim.answer)) throw IdempotencyKeys.usedForAnotherRequest();
    const { status, headers_json, body_json } = claim.answer;
    return { state: pb.IdempotencyClaimState.IDEMPOTENCY_CLAIM_STATE_REPLAY, claim_id: '', answer: { status, headers_json, body_json } };
  }

  async complete({ key, claim_id, answer }: pb.CompleteIdempotencyKeyRequest, ctx: CallContext): Promise<pb.IdempotencyKeyAck> {
    const held = this.held(key, claim_id, ctx);
    if (!answer || !Number.isInteger(answer.status) || (answer.status !== 0 && (answer.status < 100 || answer.status > 599))) {
      throw new AppError('invalid_argument', 'An answer to keep has an HTTP status, or 0 for none.');
    }
    checkHeaders(answer.headers_json);
    const stored: StoredAnswer = {
      kind: 'answer',
      status: answer.status,
      headers_json: answer.headers_json || '{}',
      body_json: answer.body_json,
    };
    // The fingerprint was fixed by the claim. A claim no longer held (taken over after it was
    // abandoned) keeps nothing: the key belongs to the later request.
    await this.keys.complete(held, stored);
    return {};
  }

  async release({ key, claim_id }: pb.ReleaseIdempotencyKeyRequest, ctx: CallContext): Promise<pb.IdempotencyKeyAck> {
    await this.keys.release(this.held(key, claim_id, ctx));
    return {};
  }

  private held(key: string, claimId: string, ctx: CallContext): HeldClaim {
    const owner = keyOwnerOf(ctx);
    IdempotencyKeys.validate(key);
    if (!CLAIM_ID.test(claimId)) throw new AppError('invalid_argument', 'claim_id names a claim ClaimIdempotencyKey answered.');
    return { id: keyIdOf(owner, key), claimId };
  }
}
