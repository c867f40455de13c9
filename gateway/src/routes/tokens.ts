import { z } from 'zod';
import { AppError, currentContext, type CallOverrides, type Clients } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import type { Principal } from '../auth/guard';
import { problem } from '../http/errors';
import { defineRoute, emptyMetaSchema, linksSchema, offsetMetaSchema, parseInput, pathId, q, SCOPES, type RouteDef } from '../http/routes';
import { offsetPagination } from './reference';

const PREFIX = '/:tenant/api/v1';
/** Removal date of the legacy email-and-password exchange: from then on it answers 410. */
export const LEGACY_EXCHANGE_SUNSET = new Date('2027-01-01T00:00:00Z');
const LEGACY_HEADERS = {
  // RFC 9745: deprecated since 2025-01-01; RFC 8594: removed at the sunset.
  Deprecation: `@${Date.UTC(2025, 0, 1) / 1000}`,
  Sunset: LEGACY_EXCHANGE_SUNSET.toUTCString(),
};
const CREATED_MESSAGE = 'Token created successfully. Store the plain_text_token now: it is returned only once and cannot be recovered.';
/**
 * Token creation under an Idempotency-Key. A token's secret is stored
 * only as a hash, and the answer kept for a replay (in the workflows service's store) must
 * not hold it either. So a replay answers 201 with the same token fields but without
 * `plain_text_token`, and says why in its `message`: the first request created the token
 * and its secret was shown once, in that first answer. A client that lost that answer
 * revokes the token and creates another.
 */
const REPLAYED_MESSAGE =
  'Token created by the first request with this Idempotency-Key. Its plain_text_token was shown once, in that answer, and cannot be shown again; if it was lost, revoke this token and create another.';

/** The created-token answer as kept for a replay: no secret, the replay's message. */
export function createdWithoutSecret(body: unknown): unknown {
  const created = body as { message?: string; data?: Array<Record<string, unknown>> };
  return {
    ...created,
    message: REPLAYED_MESSAGE,
    data: (created.data ?? []).map(({ plain_text_token: _secret, ...token }) => token),
  };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export type TokenStatus = 'active' | 'expired' | 'revoked';

export function tokenStatus(t: supply_tokens_v1.TokenInfo, now: Date): TokenStatus {
  if (t.revoked_at) return 'revoked';
  if (t.expires_at && Date.parse(t.expires_at) <= now.getTime()) return 'expired';
  return 'active';
}

/** A token as the API shows it; empty strings of the RPC become nulls. */
export function tokenResource(t: supply_tokens_v1.TokenInfo, now: Date) {
  return {
    id: t.id,
    name: t.name,
    scopes: t.scopes,
    status: tokenStatus(t, now),
    expires_at: t.expires_at || null,
    last_used_at: t.last_used_at || null,
    revoked_at: t.revoked_at || null,
    created_at: t.created_at,
    user_id: t.user_id,
    user_email: t.user_email,
  };
}

/** ISO 8601 date or date-time; without a zone it is UTC. Null when it is not one. */
export function parseExpiry(value: string): Date | null {
  const m = ISO_DATE.exec(value.trim());
  if (!m) return null;
  const text = value.trim().replace(' ', 'T');
  const ms = Date.parse(m[1] || !text.includes('T') ? text : `${text}Z`);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** The body of POST /tokens and /tokens/provision (at least one known scope, an expiry not in the past), with Laravel's messages. */
function tokenBody(now: () => Date) {
  return z.object({
    name: z.string().trim().min(1).max(255),
    scopes: z.array(z.enum(SCOPES)).refine((s) => s.length > 0, { message: 'The scopes field is required.' }),
    expires_at: z
      .string()
      .nullish()
      .superRefine((value, ctx) => {
        if (value === null || value === undefined || value === '') return;
        const at = parseExpiry(value);
        if (!at) ctx.addIssue({ code: 'custom', message: 'The expires at field must be a valid date.' });
        else if (at.getTime() <= now().getTime())
          ctx.addIssue({ code: 'custom', message: 'The expires at field must be a date after now.' });
      }),
  });
}

const tokenSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    scopes: z.array(z.string()),
    status: z.enum(['active', 'expired', 'revoked']),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    created_at: z.string(),
    user_id: z.number().int(),
    user_email: z.string(),
  })
  .meta({ id: 'Token' });
const createdSchema = z.object({
  message: z.string(),
  data: z
    .array(
      tokenSchema.extend({
        plain_text_token: z.string().optional().describe('The secret, shown once: absent from an Idempotency-Key replay.'),
      }),
    )
    .length(1),
  meta: emptyMetaSchema,
  links: linksSchema,
});

/** Calls on behalf of the path's tenant, for routes that run before any token names one. */
function forTenant(tenant: string): CallOverrides {
  return { context: { ...(currentContext() ?? { requestId: '' }), tenant } };
}

export interface TokenRouteDeps {
  clients: Clients;
  now(): Date;
  /** Called once the tokens service has revoked a token, so this process forgets it at once. */
  revoked(tenant: string, tokenId: number): void;
}

/** Validated by the handler, after the deprecation headers are set. */
const exchangeBody = z.object({
  email: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .meta({ examples: ['planner@acme.test'] }),
  password: z
    .string()
    .min(1)
    .max(1024)
    .meta({ examples: ['secret'] }),
});

export function tokenRoutes({ clients, now, revoked }: TokenRouteDeps): RouteDef[] {
  const body = tokenBody(now);
  const expiryOf = (value: string | null | undefined) => (value ? parseExpiry(value)!.toISOString() : '');
  const created = (res: supply_tokens_v1.CreatedToken) => ({
    kind: 'envelope' as const,
    status: 201,
    message: CREATED_MESSAGE,
    data: [{ ...tokenResource(res.token!, now()), plain_text_token: res.plain_text_token }],
    headers: { 'Cache-Control': 'no-store' },
  });
  const utility = { kind: 'token', scope: null, module: null, level: 'view', cost: 'utility' } as const;
  /** What POST /tokens and POST /tokens/provision share: the same body, answer and key handling. */
  const tokenCreation = {
    tag: 'Tokens',
    access: utility,
    dialect: 'current',
    body,
    response: createdSchema,
    successStatus: 201,
    idempotency: { by: 'gateway', stored: createdWithoutSecret },
  } as const;

  return [
    defineRoute({
      method: 'post',
      path: `${PREFIX}/tokens`,
      summary: "Create a token for the calling token's user (privileged scopes need Planner on the Public API)",
      ...tokenCreation,
      async handler({ body, res }) {
        const principal: Principal = res.locals.principal;
        const token = await clients.tokens.createToken({
          user_email: principal.user_email,
          name: body.name,
          scopes: body.scopes,
          expires_at: expiryOf(body.expires_at),
        });
        return created(token);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${PREFIX}/tokens/provision`,
      summary: "Create a token from the calling token: scopes within the caller's, expiry no later",
      ...tokenCreation,
      async handler({ body, res }) {
        const principal: Principal = res.locals.principal;
        const token = await clients.tokens.provisionToken({
          parent_token_id: principal.token_id,
          name: body.name,
          scopes: body.scopes,
          expires_at: expiryOf(body.expires_at),
        });
        return created(token);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${PREFIX}/tokens`,
      summary: "The calling user's tokens, newest first (workspace admins: every token of the workspace)",
      tag: 'Tokens',
      access: utility,
      dialect: 'current',
      query: z.object({ page: q.int(1, 1_000_000).default(1), per_page: q.int(1, 100).default(25) }),
      response: z.object({ data: z.array(tokenSchema), meta: offsetMetaSchema, links: linksSchema }),
      async handler({ query, res }) {
        const principal: Principal = res.locals.principal;
        const list = await clients.tokens.listTokens({
          actor: { user_id: principal.user_id, operator: false },
          user_email: '',
          page: query.page,
          per_page: query.per_page,
        });
        const at = now();
        return {
          kind: 'envelope',
          data: list.tokens.map((t) => tokenResource(t, at)),
          meta: offsetPagination(query.page, query.per_page, list.total, list.tokens.length),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${PREFIX}/tokens/create`,
      summary: 'Legacy: exchange email and password for a `*` token (deprecated; removed 2027-01-01)',
      tag: 'Legacy',
      access: { kind: 'none' },
      dialect: 'legacy',
      accepts: 'json-or-form',
      deprecated: true,
      sunset: LEGACY_EXCHANGE_SUNSET,
      // Wrong credentials: 401; Public API module disabled: 403; too many failed attempts: 429.
      errors: [401, 403, 429],
      handlerBody: exchangeBody,
      // No Idempotency-Key here: this exchange runs before any token names a tenant's
      // principal, and its answer is a credential that could not be kept for a replay anyway.
      response: z.object({ token: z.string() }),
      async handler({ req, res, params }) {
        // Set first, so every answer (422, 401, 429, 410) carries them.
        for (const [k, v] of Object.entries(LEGACY_HEADERS)) res.setHeader(k, v);
        if (now().getTime() >= LEGACY_EXCHANGE_SUNSET.getTime()) {
          throw problem(
            'gone',
            'The legacy token exchange was removed on 2027-01-01. Create tokens on the API Access page or with POST /tokens.',
          );
        }
        const input = parseInput(exchangeBody, req.body);
        try {
          const token = await clients.tokens.exchangeCredentials(input, forTenant(params.tenant!));
          return { kind: 'json', body: { token: token.plain_text_token }, headers: { 'Cache-Control': 'no-store' } };
        } catch (err) {
          if (err instanceof AppError && err.code === 'unauthenticated') {
            return { kind: 'json', status: 401, body: { message: 'Invalid credentials.' } };
          }
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${PREFIX}/tokens/:id`,
      summary: 'Revoke a token (its creator or a workspace admin); 204, effective on the next request everywhere',
      tag: 'Tokens',
      access: utility,
      dialect: 'current',
      successStatus: 204,
      async handler({ params, res }) {
        const principal: Principal = res.locals.principal;
        const id = pathId(params.id, 'token');
        await clients.tokens.revokeToken({ actor: { user_id: principal.user_id, operator: false }, id });
        revoked(principal.tenant, id);
        res.status(204).end();
        return { kind: 'sent' };
      },
    }),
  ];
}
