import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, Request, Response } from 'express';

/** The session cookie (its sha256 is what the tokens service stores). */
export const SESSION_COOKIE = 'spl_session';
/** A random value that binds the login form's CSRF token before there is a session. */
export const LOGIN_COOKIE = 'spl_login';

/**
 * A synchronizer token for `purpose`, derived from a secret only this browser's cookie
 * holds: a forged cross-site form cannot know it, and it dies with the session.
 */
export function csrfToken(cookieValue: string, purpose: 'session' | 'login'): string {
  return createHmac('sha256', cookieValue).update(`api-access-csrf:${purpose}`).digest('base64url');
}

export function csrfMatches(cookieValue: string | undefined, purpose: 'session' | 'login', presented: unknown): boolean {
  if (!cookieValue || typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfToken(cookieValue, purpose));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** HttpOnly, SameSite=Lax, scoped to the tenant's paths; Secure when the request came over https. */
export function cookieOptions(req: Request, tenant: string, maxAgeMs?: number): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure: req.secure, path: `/${tenant}`, ...(maxAgeMs ? { maxAge: maxAgeMs } : {}) };
}

export function readCookie(req: Request, name: string): string | undefined {
  const value = (req.cookies as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
}

/** The login form's cookie, set when absent. */
export function loginCookie(req: Request, res: Response, tenant: string): string {
  const existing = readCookie(req, LOGIN_COOKIE);
  if (existing) return existing;
  const value = randomBytes(32).toString('base64url');
  res.cookie(LOGIN_COOKIE, value, cookieOptions(req, tenant, 2 * 3_600_000));
  return value;
}
