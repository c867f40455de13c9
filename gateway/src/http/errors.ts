import type { NextFunction, Request, Response } from 'express';
import { AppError, isAppError, summarizeFieldErrors, type FieldErrors, type Logger } from '@supply/kit';
import { PROBLEM_OF_CODE, PROBLEMS, type ProblemSlug } from './problems';
import type { Dialect } from './routes';

/** An AppError that names the problem page an HTTP client should see. */
export function problem(slug: ProblemSlug, detail: string, extra: { headers?: Record<string, string> } = {}): AppError {
  const code = slug === 'unauthenticated' ? 'unauthenticated' : slug === 'validation-failed' ? 'invalid_argument' : PROBLEMS[slug].status === 403 ? 'permission_denied' : 'internal';
  return new AppError(code, detail, { problem: slug, ...extra });
}

/** Express and body-parser failures, and anything unexpected, as AppErrors. */
function normalize(err: unknown): AppError {
  if (isAppError(err)) return err;
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.too.large') return problem('payload-too-large', 'The request body is larger than this endpoint accepts.');
  if (e?.type === 'entity.parse.failed') return problem('bad-request', 'The request body is not valid JSON.');
  if (e?.type === 'charset.unsupported' || e?.type === 'encoding.unsupported') return problem('unsupported-media-type', String(e.message));
  return new AppError('internal', 'Internal server error.', { cause: err });
}

/** A client that neither accepts JSON nor says it is XHR gets the login redirect instead of a 401 body. */
function wantsJson(req: Request): boolean {
  return req.get('X-Requested-With') === 'XMLHttpRequest' || /\bjson\b/i.test(req.get('Accept') ?? '');
}

/**
 * The one place an error becomes an HTTP answer: 401 JSON (or login redirect), 422 JSON
 * (or the legacy 422 `{success: false, ...}`), and RFC 9457 problem+json for everything else, on
 * legacy routes too (DECISIONS 5 gives the legacy dialect its own 422 body only).
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appError = normalize(err);
    const dialect: Dialect = res.locals.dialect ?? 'current';
    const requestId: string = res.locals.requestId ?? '';
    const headers = (appError.details.headers as Record<string, string> | undefined) ?? {};
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (appError.code === 'internal' && !appError.details.problem) {
      logger.error({ err: appError.details.cause ?? appError, path: req.path }, 'request failed');
    }
    if (res.headersSent) {
      res.end();
      return;
    }

    if (appError.code === 'unauthenticated') {
      const tenant = req.params?.tenant ?? req.path.split('/')[1];
      if (tenant && (dialect === 'page' || !wantsJson(req))) {
        res.redirect(302, `/${encodeURIComponent(String(tenant))}/login`);
        return;
      }
      res.status(401).json({ message: 'Unauthenticated.' });
      return;
    }

    const fields = appError.details.fields as FieldErrors | undefined;
    if (appError.code === 'invalid_argument' && fields) {
      const message = summarizeFieldErrors(fields);
      if (dialect === 'legacy') res.status(422).json({ success: false, message, errors: fields });
      else res.status(422).json({ message, errors: fields });
      return;
    }

    const slug = (appError.details.problem as ProblemSlug | undefined) ?? PROBLEM_OF_CODE[appError.code];
    const { status, title } = PROBLEMS[slug];
    const detail = appError.code === 'internal' && !appError.details.problem ? 'The server could not complete the request.' : appError.message;
    res
      .status(status)
      .type('application/problem+json')
      .send(
        JSON.stringify({
          type: `/problems/${slug}`,
          title,
          status,
          detail,
          instance: req.originalUrl.split('?')[0],
          request_id: requestId,
          ...((appError.details.extensions as Record<string, unknown>) ?? {}),
        }),
      );
  };
}
