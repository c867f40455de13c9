import type { NextFunction, Request, Response } from 'express';
import { AppError, isAppError, summarizeFieldErrors, ValidationError, type FieldErrors, type Logger } from '@supply/kit';
import { PROBLEM_OF_CODE, PROBLEMS, type ProblemSlug } from './problems';
import type { Dialect } from './routes';

/** An AppError that names the problem page an HTTP client should see. */
export function problem(slug: ProblemSlug, detail: string, extra: { headers?: Record<string, string> } = {}): AppError {
  const code =
    slug === 'unauthenticated'
      ? 'unauthenticated'
      : slug === 'validation-failed'
        ? 'invalid_argument'
        : PROBLEMS[slug].status === 403
          ? 'permission_denied'
          : 'internal';
  return new AppError(code, detail, { problem: slug, ...extra });
}

/** 415 for a Content-Encoding this API does not undo, on every body-reading route. */
export function unsupportedEncoding(encoding: string): AppError {
  return problem(
    'unsupported-media-type',
    `The request body's Content-Encoding ${encoding.slice(0, 100)} is not one this API reads (gzip, deflate, br or identity).`,
  );
}

/**
 * Whether a body the JSON parser refused is JSON after all: a bare value such as `null` or `42`,
 * which the parser's strict mode refuses because no endpoint reads one.
 */
function isBareJsonValue(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  const first = body.trimStart()[0];
  if (first === undefined || first === '{' || first === '[') return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

/** Express and body-parser failures, and anything unexpected, as AppErrors. */
export function normalize(err: unknown, req: Request): AppError {
  if (isAppError(err)) return err;
  // The router decoding a path parameter such as `/items/%ff`.
  if (err instanceof URIError)
    return problem('bad-request', 'The request path holds a malformed percent-escape (each % must start a UTF-8 byte like %2F).');
  const e = err as { type?: string; status?: number; message?: string; field?: string };
  if (e?.type === 'form.proto.key') return new ValidationError({ [String(e.field)]: [`The ${e.field} field is prohibited.`] });
  // edge.ts verifyJsonDepth, before JSON.parse: its message is the detail naming the limit.
  if (e?.type === 'json.too.deep') return problem('bad-request', String(e.message));
  if (e?.type === 'entity.too.large') return problem('payload-too-large', 'The request body is larger than this endpoint accepts.');
  if (e?.type === 'entity.parse.failed') {
    if (!req.is('application/json')) return problem('bad-request', 'The request body cannot be parsed as its Content-Type.');
    return problem(
      'bad-request',
      isBareJsonValue((err as { body?: unknown }).body)
        ? 'The request body must be a JSON object or array, not a bare string, number, true, false or null.'
        : 'The request body is not valid JSON.',
    );
  }
  if (e?.type === 'encoding.unsupported') return unsupportedEncoding(req.get('Content-Encoding') ?? '');
  if (e?.type === 'charset.unsupported') return problem('unsupported-media-type', String(e.message));
  // Any other body-reading failure (a gzip/deflate/br body that is not so encoded, a short body).
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    const encoding = req.get('Content-Encoding');
    return problem(
      'bad-request',
      encoding && !/^identity$/i.test(encoding)
        ? `The request body is not valid ${encoding.toLowerCase()} data, as its Content-Encoding says it is.`
        : 'The request body could not be read.',
    );
  }
  return new AppError('internal', 'Internal server error.', { cause: err });
}

/** Seconds a client should wait after a 503/504 that names no time of its own. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** A client that neither accepts JSON nor says it is XHR gets the login redirect instead of a 401 body. */
function wantsJson(req: Request): boolean {
  return req.get('X-Requested-With') === 'XMLHttpRequest' || /\bjson\b/i.test(req.get('Accept') ?? '');
}

/**
 * The one place an error becomes an HTTP answer: 401 JSON (or login redirect), 422 JSON
 * (or the legacy 422 `{success: false, ...}`), and RFC 9457 problem+json for everything else, on
 * legacy routes too: the legacy dialect differs from the current one in its 422 body only.
 */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appError = normalize(err, req);
    const dialect: Dialect = res.locals.dialect ?? 'current';
    const requestId: string = res.locals.requestId ?? '';
    // The access log and the rejection metrics read the problem the client is answered with.
    res.locals.refusal =
      appError.code === 'unauthenticated'
        ? 'unauthenticated'
        : appError.code === 'invalid_argument' && appError.details.fields
          ? 'validation-failed'
          : ((appError.details.problem as ProblemSlug | undefined) ?? PROBLEM_OF_CODE[appError.code]);
    const headers = (appError.details.headers as Record<string, string> | undefined) ?? {};
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (appError.code === 'internal' && !appError.details.problem) {
      logger.error({ err: appError.details.cause ?? appError, path: req.path }, 'request failed');
    }
    // A transport failure's library text (addresses, causes) goes to the log (with the request id), never to the client.
    if (appError.details.transport === true) {
      logger.warn({ code: appError.code, upstream: appError.details.upstream, path: req.path }, 'upstream call failed');
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
    const detail =
      appError.code === 'internal' && !appError.details.problem ? 'The server could not complete the request.' : appError.message;
    if ((status === 503 || status === 504) && !res.getHeader('Retry-After'))
      res.setHeader('Retry-After', String(DEFAULT_RETRY_AFTER_SECONDS));
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
