/**
 * The answer shapes every response must have (the contract's section on shapes): never a
 * 5xx, 401 as `{"message":"Unauthenticated."}` or a login redirect, 422 as
 * `{"message","errors"}` (legacy: with `success: false`), every other failure as
 * problem+json; an `X-Request-Id` on everything; no internal detail; no slow answer.
 */
import { SLOW_MS, type FuzzRequest, type FuzzResponse } from './http';
import type { Operation } from './openapi';

/** Internals an answer must never show: addresses, stacks, runtime error names, gRPC text. */
const LEAKS = [
  /ECONN(REFUSED|RESET)/,
  /127\.0\.0\.1:\d{2,5}/,
  /\bat [\w.<>]+ \(.*:\d+:\d+\)/,
  /\b(URIError|TypeError|RangeError|ReferenceError)\b/,
  /Maximum call stack/,
  /\b(UNAVAILABLE|DEADLINE_EXCEEDED|INTERNAL|UNKNOWN): /,
  /node_modules/,
  /Cannot read propert/,
];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A capacity refusal the contract documents on compute routes (a workspace run in
 * progress, the plan pool full): 503 problem+json `service-unavailable` with Retry-After.
 */
function documentedCapacity503(op: Operation, res: FuzzResponse): boolean {
  const body = res.json;
  return (
    res.status === 503 &&
    /\/(forecasts|supply-plans)\/generate$/.test(op.template) &&
    Boolean(res.headers['retry-after']) &&
    isObject(body) &&
    body.type === '/problems/service-unavailable'
  );
}

function problemShape(req: FuzzRequest, res: FuzzResponse): string[] {
  const out: string[] = [];
  if (!/^application\/problem\+json/.test(String(res.headers['content-type'] ?? '')))
    out.push(`${res.status} is not application/problem+json`);
  const body = res.json;
  if (!isObject(body)) return [...out, `${res.status} body is not a JSON object`];
  for (const field of ['type', 'title', 'detail', 'instance', 'request_id'] as const) {
    if (typeof body[field] !== 'string') out.push(`problem field ${field} missing or not a string`);
  }
  if (body.status !== res.status) out.push(`problem status ${String(body.status)} differs from HTTP ${res.status}`);
  if (typeof body.type === 'string' && !body.type.startsWith('/problems/')) out.push(`problem type ${body.type} is not a /problems/ page`);
  if (typeof body.request_id === 'string' && body.request_id !== res.headers['x-request-id'])
    out.push('problem request_id differs from X-Request-Id');
  if (typeof body.instance === 'string' && body.instance !== req.path.split('?')[0])
    out.push(`problem instance ${body.instance.slice(0, 80)} is not the request path`);
  return out;
}

/** What is wrong with this answer to this request; empty when nothing is. */
export function shapeViolations(op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
  const out: string[] = [];
  if (res.ms > SLOW_MS) out.push(`answered in ${Math.round(res.ms)} ms (limit ${SLOW_MS} ms)`);
  if (res.status >= 500 && !documentedCapacity503(op, res)) out.push(`5xx: ${res.status}`);
  if (!res.headers['x-request-id']) out.push('no X-Request-Id header');
  for (const leak of LEAKS) if (leak.test(res.text)) out.push(`answer reveals internals (${leak})`);
  if (op.page) return out;

  if (res.status === 302 || res.status === 303) {
    const location = String(res.headers.location ?? '');
    if (!/^\/[^/]+\/login$/.test(location)) out.push(`redirect to ${location} is not a login page`);
    if (/json/i.test(req.headers.Accept ?? '') || req.headers['X-Requested-With'] === 'XMLHttpRequest')
      out.push('a JSON client was redirected instead of a 401');
    return out;
  }
  if (res.status === 401) {
    const legacyExchange = op.id === 'POST /{tenant}/api/v1/tokens/create';
    const body = res.json;
    const ok =
      isObject(body) &&
      Object.keys(body).length === 1 &&
      (body.message === 'Unauthenticated.' || (legacyExchange && body.message === 'Invalid credentials.'));
    if (!ok) out.push(`401 body is not {"message":"Unauthenticated."}: ${res.text.slice(0, 120)}`);
    return out;
  }
  if (res.status === 422) {
    const body = res.json;
    if (!isObject(body)) return [...out, '422 body is not a JSON object'];
    if (typeof body.message !== 'string' || !body.message) out.push('422 without a message');
    if (!isObject(body.errors) || Object.keys(body.errors).length === 0) out.push('422 without errors');
    else {
      for (const [field, messages] of Object.entries(body.errors)) {
        if (!field) out.push('422 error under an empty field name');
        if (!Array.isArray(messages) || messages.length === 0 || messages.some((m) => typeof m !== 'string' || !m))
          out.push(`422 errors.${field} is not a list of messages`);
        else if (messages.some((m: string) => /\bThe {2}/.test(m))) out.push(`422 message names an empty field: ${messages[0]}`);
      }
    }
    if (op.legacy && body.success !== false) out.push('legacy 422 without success: false');
    const expected = op.legacy ? ['errors', 'message', 'success'] : ['errors', 'message'];
    if (Object.keys(body).sort().join() !== expected.join()) out.push(`422 body has keys ${Object.keys(body).sort().join(',')}`);
    return out;
  }
  if (res.status >= 400) return [...out, ...problemShape(req, res)];
  if (res.status !== 204 && /json/i.test(String(res.headers['content-type'] ?? '')) && res.json === undefined)
    out.push(`${res.status} JSON answer does not parse`);
  return out;
}

/** The media type a request's body was sent as (`text/plain`), or '' without a body. */
export function sentMediaType(req: FuzzRequest): string {
  if (req.body === undefined) return '';
  return String(req.headers['Content-Type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** A body route must not act on a body it cannot read (a content type it does not take). */
export function contentTypeViolations(op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
  const sent = sentMediaType(req);
  if (!sent || op.page || !op.body || op.body.contentTypes.includes(sent)) return [];
  return res.status >= 200 && res.status < 300 ? [`${res.status}: acted on a body sent as ${sent}, which the route does not read`] : [];
}

/** An unknown `filter[...]` name is a 400 `invalid-query`, prototype names included. */
export function filterViolations(op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
  if (!op.params.some((p) => p.in === 'query' && p.name === 'filter')) return [];
  const name = /[?&]filter\[(__proto__|constructor|toString|hasOwnProperty|valueOf|prototype)\]=/.exec(req.path)?.[1];
  return name && res.status >= 200 && res.status < 300 ? [`unknown filter filter[${name}] answered ${res.status} (must be 400)`] : [];
}

/** A body that says it is compressed and is not cannot be read: never a 2xx (nor a 5xx). */
export function encodingViolations(op: Operation, req: FuzzRequest, res: FuzzResponse): string[] {
  const encoding = String(req.headers['Content-Encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (!encoding || encoding === 'identity' || op.page || req.body === undefined) return [];
  return res.status >= 200 && res.status < 300
    ? [`${res.status}: read a body sent with Content-Encoding ${encoding} that is not so encoded`]
    : [];
}
