/**
 * `Idempotency-Key` for the POSTs the gateway answers itself, declared per
 * route with `idempotency: 'gateway'` and applied by app.ts around the handler. The keys
 * live in the workflows service, which owns them (Claim/Complete/ReleaseIdempotencyKey),
 * in one namespace per tenant and user with the keys of syncs and compute runs: every token
 * of a user shares the user's keys, another user's same key is another key (the service
 * takes the user from the principal each call carries, so it is never another request's).
 *
 * - No header, or a route that keeps no keys here: nothing happens, no round trip.
 * - A header that is not 1-255 visible ASCII characters: 422 on `Idempotency-Key`.
 * - Otherwise one ClaimIdempotencyKey call, after authentication, the gates and validation
 *   (a request refused there never touches a key) and before metering. Its fingerprint is
 *   the sha256 of the method, the route path, the tenant and the canonical JSON of the
 *   parsed body (object keys sorted: the same JSON sent in another key order is the same
 *   request). The claim answers one of:
 *     - claimed: the handler runs; a 2xx answer is kept (CompleteIdempotencyKey), anything
 *       else frees the key (ReleaseIdempotencyKey) so the client may retry with it. Either
 *       call is awaited before the answer goes out, so a client that retries the moment it
 *       has an answer finds the key settled (a replay, or free), never a 409;
 *     - replay: the kept answer again, with `Idempotent-Replayed: true`: same status, same
 *       body, the handler's own headers (Location, Cache-Control...), never those of one
 *       response (RateLimit, Credits-Remaining, X-Request-Id are the replay's own);
 *     - 422 on `Idempotency-Key` (used with another request) or 409 (the first request with
 *       it is still unanswered), from the workflows service through the kit's error table.
 *
 * Metering comes after the claim, since a request costs when it does work. A replay
 * does none: it takes a rate slot like any request but spends no credits (`replayRoute`).
 * A 409 or 422 of the claim is a refusal and, like every refusal, spends nothing.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { ValidationError, type CallOverrides, type Clients, type Logger } from '@supply/kit';
import { supply_workflows_v1 as pb } from '@supply/contracts';
import { requestContext } from './context';
import type { RouteDef } from './routes';

const KEY = /^[\x21-\x7e]{1,255}$/;
/** Headers that belong to one response (or are the transport's), never kept for a replay. */
const OWN_HEADERS = new Set([
  'ratelimit',
  'ratelimit-policy',
  'credits-remaining',
  'retry-after',
  'x-request-id',
  'idempotent-replayed',
  'set-cookie',
  'content-length',
  'content-type',
]);

export type IdempotencyRpcs = Pick<Clients['workflows'], 'claimIdempotencyKey' | 'completeIdempotencyKey' | 'releaseIdempotencyKey'>;

/** What the claim decided for a request that sent a key. */
export type Keyed =
  { kind: 'replay'; answer: pb.IdempotentAnswer } | { kind: 'claimed'; key: string; claimId: string; route: RouteDef; call: CallOverrides };

/** JSON with object keys sorted, so the same body sent in another key order fingerprints alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprintOf(method: string, routePath: string, tenant: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method.toUpperCase(), routePath, tenant, canonicalJson(body)]))
    .digest('hex');
}

/** The route as metering sees a replay: same endpoint, no credits (the first request paid for the work). */
export function replayRoute(route: RouteDef): RouteDef {
  return route.access.kind === 'token' ? { ...route, access: { ...route.access, cost: 'utility' } } : route;
}

export class GatewayIdempotency {
  constructor(
    private readonly rpcs: IdempotencyRpcs,
    private readonly logger: Logger,
  ) {}

  /** Before the handler. Null: the route keeps no keys here or the request sent none (no round trip). */
  async begin(route: RouteDef, req: Request, res: Response): Promise<Keyed | null> {
    if (!route.idempotency) return null;
    const key = req.get('Idempotency-Key');
    if (key === undefined) return null;
    if (!KEY.test(key)) {
      throw new ValidationError({ 'Idempotency-Key': ['The Idempotency-Key header must be 1 to 255 visible ASCII characters.'] });
    }
    const fingerprint = fingerprintOf(route.method, route.path, String(req.params.tenant ?? ''), req.body);
    // The request's own principal names whose key it is; settling uses the same.
    const call: CallOverrides = { context: requestContext(res) };
    const claim = await this.rpcs.claimIdempotencyKey({ key, fingerprint }, call);
    if (claim.state === pb.IdempotencyClaimState.IDEMPOTENCY_CLAIM_STATE_REPLAY && claim.answer) {
      return { kind: 'replay', answer: claim.answer };
    }
    return { kind: 'claimed', key, claimId: claim.claim_id, route, call };
  }

  /** Answers with a kept answer again. */
  replay(res: Response, answer: pb.IdempotentAnswer): void {
    for (const [name, value] of Object.entries(JSON.parse(answer.headers_json || '{}') as Record<string, string>)) {
      if (!OWN_HEADERS.has(name.toLowerCase())) res.setHeader(name, value);
    }
    res.setHeader('Idempotent-Replayed', 'true');
    res.status(answer.status).type('application/json').send(answer.body_json);
  }

  /**
   * After the handler: keeps a 2xx answer (as the route allows: see `RouteDef.idempotency`),
   * frees the key otherwise. Never throws: the work is done and its answer goes out either way.
   */
  async settle(keyed: Extract<Keyed, { kind: 'claimed' }>, status: number, headers: Record<string, string>, body: unknown): Promise<void> {
    if (status < 200 || status > 299) return this.release(keyed);
    const mode = keyed.route.idempotency;
    const kept = typeof mode === 'object' ? mode.stored(body) : body;
    const keptHeaders = Object.fromEntries(Object.entries(headers).filter(([name]) => !OWN_HEADERS.has(name.toLowerCase())));
    try {
      await this.rpcs.completeIdempotencyKey(
        {
          key: keyed.key,
          claim_id: keyed.claimId,
          answer: { status, headers_json: JSON.stringify(keptHeaders), body_json: JSON.stringify(kept) },
        },
        keyed.call,
      );
    } catch (err) {
      // The key stays claimed until it counts as abandoned: a retry meanwhile is a 409, never a second run.
      this.logger.warn({ err, key: keyed.key }, 'could not keep an idempotent answer');
    }
  }

  /** Frees the key of a request that failed or whose answer cannot be kept. Never throws. */
  async release(keyed: Extract<Keyed, { kind: 'claimed' }>): Promise<void> {
    try {
      await this.rpcs.releaseIdempotencyKey({ key: keyed.key, claim_id: keyed.claimId }, keyed.call);
    } catch (err) {
      // The key frees itself once the claim counts as abandoned.
      this.logger.warn({ err, key: keyed.key }, 'could not release an Idempotency-Key');
    }
  }
}
