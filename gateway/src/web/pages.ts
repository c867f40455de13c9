import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { AppError, currentContext, isAppError, parseId, type CallOverrides, type Clients, type Logger } from '@supply/kit';
import type { supply_tokens_v1 } from '@supply/contracts';
import { DEFAULT_RETRY_AFTER_SECONDS, normalize } from '../http/errors';
import { encodingChecked } from '../http/edge';
import { PROBLEMS, type ProblemSlug } from '../http/problems';
import { apiAccessPage, EXPIRY_CHOICES, loginPage, messagePage, PERMISSIONS, type ApiAccessView } from './html';
import { explorerData, explorerPage } from './explorer';
import { cookieOptions, csrfMatches, csrfToken, LOGIN_COOKIE, loginCookie, readCookie, SESSION_COOKIE } from './session';

const SCRIPT = readFileSync(new URL('./assets/api-access.js', import.meta.url), 'utf8');
const EXPLORER_SCRIPT = readFileSync(new URL('./assets/forecast-explorer.js', import.meta.url), 'utf8');
/** uPlot, served from the installed package: the explorer works offline and under `script-src 'self'`. */
const UPLOT_DIR = dirname(createRequire(import.meta.url).resolve('uplot'));
const DAY_MS = 86_400_000;

export interface WebPageDeps {
  clients: Clients;
  logger: Logger;
  now(): Date;
  /** Called once a token is revoked, so this gateway forgets it at once. */
  revoked(tenant: string, tokenId: number): void;
}

type Tenant = supply_tokens_v1.Tenant;
type Session = supply_tokens_v1.Session;

/** An HTML answer that ends a page request early (404, 403, 419, 429). */
class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly text: string,
  ) {
    super(text);
  }
}
const notFound = () => new PageError(404, 'Not found', 'There is no such page.');
const expired = () => new PageError(419, 'Page expired', 'The form was out of date. Go back, reload the page and try again.');

const isCode = (err: unknown, code: AppError['code']) => isAppError(err) && err.code === code;

/**
 * The API Access page and its login, rendered on the server: `/{tenant}/login`,
 * `/{tenant}/settings/api-access`, logout, and the one same-origin script they use.
 * Every form carries a CSRF token bound to the session (or, for login, to a cookie).
 */
export function webPages(deps: WebPageDeps): Router {
  const { clients } = deps;
  const router = express.Router();
  const forms = express.urlencoded({ extended: true, limit: '32kb', parameterLimit: 50 });
  const asTenant = (tenant: string): CallOverrides => ({ context: { ...(currentContext() ?? { requestId: '' }), tenant } });

  router.get('/assets/api-access.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'public, max-age=300').send(SCRIPT);
  });
  router.get('/assets/forecast-explorer.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'public, max-age=300').send(EXPLORER_SCRIPT);
  });
  router.get('/assets/uplot.js', (_req, res, next) => {
    res.sendFile(
      join(UPLOT_DIR, 'uPlot.iife.min.js'),
      { maxAge: '1h', headers: { 'Content-Type': 'application/javascript; charset=utf-8' } },
      (err) => err && next(err),
    );
  });
  router.get('/assets/uplot.css', (_req, res, next) => {
    res.sendFile(
      join(UPLOT_DIR, 'uPlot.min.css'),
      { maxAge: '1h', headers: { 'Content-Type': 'text/css; charset=utf-8' } },
      (err) => err && next(err),
    );
  });

  // Only on the page routes: API answers keep their own caching headers and ignore cookies.
  const parseCookies = cookieParser();
  const page: RequestHandler = (req, res, next) => {
    res.set('Cache-Control', 'no-store');
    parseCookies(req, res, next);
  };

  /** The workspace, if its API Access page exists: unknown and module-disabled tenants are both 404. */
  async function pageTenant(slug: string): Promise<Tenant> {
    try {
      const tenant = await clients.tokens.getTenant({ slug });
      if (tenant.public_api_enabled) return tenant;
    } catch (err) {
      if (!isCode(err, 'not_found')) throw err;
    }
    throw notFound();
  }

  async function sessionOf(req: Request, tenant: string): Promise<{ session: Session; cookie: string } | null> {
    const cookie = readCookie(req, SESSION_COOKIE);
    if (!cookie) return null;
    try {
      return { session: await clients.tokens.getSession({ session_token: cookie }, asTenant(tenant)), cookie };
    } catch (err) {
      if (isCode(err, 'unauthenticated')) return null;
      throw err;
    }
  }

  /** The signed-in user with at least View on `module`, or a redirect to the login page. */
  async function requireSession(req: Request, res: Response, tenant: Tenant, module: 'public_api' | 'demand' = 'public_api') {
    const found = await sessionOf(req, tenant.slug);
    if (!found) {
      res.clearCookie(SESSION_COOKIE, cookieOptions(req, tenant.slug));
      res.redirect(302, `/${tenant.slug}/login`);
      return null;
    }
    const user = found.session.user!;
    if (!user.is_admin && (user.levels[module] ?? 'none') === 'none') {
      throw new PageError(
        403,
        'No access',
        `Your account has no access to the ${module === 'demand' ? 'Demand' : 'Public API'} module of this workspace.`,
      );
    }
    return { ...found, csrf: csrfToken(found.cookie, 'session') };
  }

  async function renderApiAccess(res: Response, status: number, view: Omit<ApiAccessView, 'tokens' | 'now'>) {
    const list = await clients.tokens.listTokens(
      { actor: { user_id: view.session.user!.id, operator: false }, user_email: view.session.user!.email, page: 1, per_page: 100 },
      asTenant(view.tenant.slug),
    );
    res
      .status(status)
      .type('html')
      .send(apiAccessPage({ ...view, tokens: list.tokens, now: deps.now() }));
  }

  router.get('/:tenant/login', page, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    if (await sessionOf(req, tenant.slug)) return res.redirect(302, `/${tenant.slug}/settings/api-access`);
    const csrf = csrfToken(loginCookie(req, res, tenant.slug), 'login');
    res.type('html').send(loginPage({ tenant, csrf }));
  });

  router.post('/:tenant/login', page, encodingChecked, forms, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    const cookie = readCookie(req, LOGIN_COOKIE);
    if (!csrfMatches(cookie, 'login', req.body?._token)) throw expired();
    const email = typeof req.body.email === 'string' ? req.body.email.trim() : '';
    const password = typeof req.body.password === 'string' ? req.body.password : '';
    const again = (status: number, error: string) =>
      res
        .status(status)
        .type('html')
        .send(loginPage({ tenant, csrf: csrfToken(cookie!, 'login'), email, error }));
    if (!email || !password) return again(422, 'Enter your email and password.');
    try {
      const login = await clients.tokens.login({ email, password }, asTenant(tenant.slug));
      const lifetime = Date.parse(login.expires_at) - deps.now().getTime();
      res.clearCookie(LOGIN_COOKIE, cookieOptions(req, tenant.slug));
      res.cookie(SESSION_COOKIE, login.session_token, cookieOptions(req, tenant.slug, lifetime));
      return res.redirect(303, `/${tenant.slug}/settings/api-access`);
    } catch (err) {
      if (isCode(err, 'unauthenticated')) return again(422, 'These credentials do not match our records.');
      if (isCode(err, 'resource_exhausted')) {
        res.set(((err as AppError).details.headers as Record<string, string> | undefined) ?? {});
        return again(429, 'Too many login attempts. Please try again in a minute.');
      }
      throw err;
    }
  });

  router.post('/:tenant/logout', page, encodingChecked, forms, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    const cookie = readCookie(req, SESSION_COOKIE);
    if (cookie) {
      if (!csrfMatches(cookie, 'session', req.body?._token)) throw expired();
      await clients.tokens.logout({ session_token: cookie }, asTenant(tenant.slug));
    }
    res.clearCookie(SESSION_COOKIE, cookieOptions(req, tenant.slug));
    res.redirect(303, `/${tenant.slug}/login`);
  });

  router.get('/:tenant/settings/api-access', page, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    const signedIn = await requireSession(req, res, tenant);
    if (!signedIn) return;
    const notice = typeof req.query.revoked === 'string' ? 'Token revoked. Requests with it are refused from now on.' : undefined;
    await renderApiAccess(res, 200, { tenant, session: signedIn.session, csrf: signedIn.csrf, notice });
  });

  router.get('/:tenant/forecasts/explorer', page, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    const signedIn = await requireSession(req, res, tenant, 'demand');
    if (!signedIn) return;
    const idParam = (name: string) => (typeof req.query[name] === 'string' ? (parseId(req.query[name] as string) ?? undefined) : undefined);
    const data = await explorerData(clients, asTenant(tenant.slug), {
      item_location_id: idParam('item_location_id'),
      customer_group_id: idParam('customer_group_id'),
    });
    res
      .type('html')
      .send(explorerPage({ slug: tenant.slug, tenantName: tenant.name, email: signedIn.session.user!.email, csrf: signedIn.csrf, data }));
  });

  router.post('/:tenant/settings/api-access/tokens', page, encodingChecked, forms, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    const signedIn = await requireSession(req, res, tenant);
    if (!signedIn) return;
    if (!csrfMatches(signedIn.cookie, 'session', req.body?._token)) throw expired();
    const { session, csrf } = signedIn;
    const name = typeof req.body.name === 'string' ? req.body.name.trim() : '';
    const expiry = typeof req.body.expiry === 'string' ? req.body.expiry : 'none';
    const picked = ([] as unknown[]).concat(req.body.scopes ?? []).filter((s): s is string => typeof s === 'string');
    const errors: Record<string, string[]> = {};
    if (!name) errors.name = ['The name field is required.'];
    else if (name.length > 255) errors.name = ['The name field must not be greater than 255 characters.'];
    if (!EXPIRY_CHOICES.some((c) => c.value === expiry)) errors.expiry = ['The selected expiration is invalid.'];
    if (picked.length === 0) errors.scopes = ['Choose at least one permission.'];
    else if (picked.some((s) => !PERMISSIONS.some((p) => p.scope === s))) errors.scopes = ['The selected permissions are invalid.'];
    const old = { name, expiry, scopes: picked };
    if (Object.keys(errors).length) return renderApiAccess(res, 422, { tenant, session, csrf, errors, old });
    // All Permissions grants `*`, whatever else is ticked.
    const scopes = picked.includes('*') ? ['*'] : picked;
    const expiresAt = expiry === 'none' ? '' : new Date(deps.now().getTime() + Number(expiry) * DAY_MS).toISOString();
    try {
      const created = await clients.tokens.createToken(
        { user_email: session.user!.email, name, scopes, expires_at: expiresAt },
        asTenant(tenant.slug),
      );
      await renderApiAccess(res, 201, { tenant, session, csrf, created: { name, plain: created.plain_text_token } });
    } catch (err) {
      if (isCode(err, 'permission_denied')) {
        return renderApiAccess(res, 403, { tenant, session, csrf, old, errors: { scopes: [(err as Error).message] } });
      }
      if (isCode(err, 'invalid_argument') && (err as AppError).details.fields) {
        return renderApiAccess(res, 422, {
          tenant,
          session,
          csrf,
          old,
          errors: (err as AppError).details.fields as Record<string, string[]>,
        });
      }
      throw err;
    }
  });

  router.post('/:tenant/settings/api-access/tokens/:id/revoke', page, encodingChecked, forms, async (req, res) => {
    const tenant = await pageTenant(String(req.params.tenant));
    const signedIn = await requireSession(req, res, tenant);
    if (!signedIn) return;
    if (!csrfMatches(signedIn.cookie, 'session', req.body?._token)) throw expired();
    const id = parseId(String(req.params.id));
    if (id === null) throw notFound();
    try {
      await clients.tokens.revokeToken({ actor: { user_id: signedIn.session.user!.id, operator: false }, id }, asTenant(tenant.slug));
    } catch (err) {
      if (isCode(err, 'not_found')) throw notFound();
      throw err;
    }
    deps.revoked(tenant.slug, id);
    res.redirect(303, `/${tenant.slug}/settings/api-access?revoked=${id}`);
  });

  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.end();
    if (err instanceof PageError) return void res.status(err.status).type('html').send(messagePage(err.title, err.text));
    // A service away (another process, restarting) is a moment's wait, as on the API routes.
    if (isAppError(err) && err.code === 'unavailable') {
      return void res
        .status(503)
        .setHeader('Retry-After', String(DEFAULT_RETRY_AFTER_SECONDS))
        .type('html')
        .send(messagePage('Service unavailable', 'The page could not be shown. Try again in a moment.'));
    }
    // A body the form parser refuses (unknown encoding, not so encoded, too large) is the client's, as on the API.
    const refusal = normalize(err, req);
    const slug = refusal.details.problem as ProblemSlug | undefined;
    if (slug && PROBLEMS[slug].status < 500) {
      return void res.status(PROBLEMS[slug].status).type('html').send(messagePage(PROBLEMS[slug].title, refusal.message));
    }
    deps.logger.error({ err, path: req.path }, 'page failed');
    res.status(500).type('html').send(messagePage('Something went wrong', 'The page could not be shown. Try again in a moment.'));
  });
  return router;
}
