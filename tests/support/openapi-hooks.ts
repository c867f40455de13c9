import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { OpenApiValidator } from './openapi-validator';

/**
 * Mocha root hooks: every answer an e2e test receives from a local server is checked against
 * the gateway's OpenAPI document (tests/support/openapi-validator.ts), whether it came through
 * fetch or through node:http (`raw()` of the compression and passthrough tests, `send()` of
 * tests/support/processes.ts, the upload helpers). A mismatch rejects that fetch; a node:http
 * answer is checked once its body has been read (decoded from br, gzip or deflate first). Either
 * way the test fails in afterEach if it would otherwise pass.
 */
const LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);
const original = globalThis.fetch;
const originalRequest = http.request;
const originalGet = http.get;
let validator: OpenApiValidator | undefined;
/** Shared through globalThis: a test that imports this module may get a second instance of it. */
const state = ((globalThis as { __openApiHooks?: { violations: string[]; checked: number } }).__openApiHooks ??= {
  violations: [],
  checked: 0,
});
const violations = state.violations;

export class OpenApiViolation extends Error {}

/** The stack of this call, async frames included, deep enough to reach the test that made it. */
function callStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  try {
    return new Error().stack ?? '';
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Calls made from an e2e test file or its support module (async stack frames included). */
const fromE2e = (stack = callStack()) => /[/\\]tests[/\\]e2e[/\\]/.test(stack);
/** node:http exchanges of e2e tests, and of the process helpers they drive (drain scenarios). */
const rawFromE2e = (stack = callStack()) => fromE2e(stack) || /[/\\]tests[/\\]support[/\\]processes\.ts/.test(stack);

const watching = (url: string) => process.env.OPENAPI_VALIDATE !== '0' && LOCAL.has(new URL(url).hostname);

/** Checks one answer; records and returns what does not match. */
function verify(request: { method: string; url: string }, answer: { status: number; headers: Headers; body: string }): string[] {
  state.checked++;
  validator ??= new OpenApiValidator();
  const { problems } = validator.check(request, answer);
  violations.push(...problems);
  return problems;
}

async function checkedFetch(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
  // Not `new Request(input)`: that would consume the body of a Request passed in.
  const request =
    input instanceof Request
      ? { method: init?.method ?? input.method, url: input.url }
      : { method: init?.method ?? 'GET', url: input instanceof URL ? input.href : String(input) };
  const watched = watching(request.url) && fromE2e();
  const response = await original(input, init);
  if (!watched) return response;
  const body = await response.clone().text();
  const problems = verify({ method: request.method, url: request.url }, { status: response.status, headers: response.headers, body });
  if (problems.length > 0) throw new OpenApiViolation(`The answer does not match the OpenAPI document:\n  ${problems.join('\n  ')}`);
  return response;
}

/** The body as the client meant to read it: decoded from its Content-Encoding. */
export function decodedBody(bytes: Buffer, encoding: string | undefined): string {
  const coding = (encoding ?? '').trim().toLowerCase();
  if (coding === 'br') return brotliDecompressSync(bytes).toString('utf8');
  if (coding === 'gzip' || coding === 'x-gzip') return gunzipSync(bytes).toString('utf8');
  if (coding === 'deflate') return inflateSync(bytes).toString('utf8');
  return bytes.toString('utf8');
}

const headersOf = (res: IncomingMessage) => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
};

/**
 * Watches the answer of a node:http request without reading it: the chunks the caller reads
 * (`data` events, in flowing or paused mode) are kept, and at `end` (before the caller's own
 * `end` listeners run) the whole answer is checked. An answer the caller never reads is not.
 */
function watchAnswer(req: ClientRequest, url: string) {
  req.once('response', (res: IncomingMessage) => {
    const chunks: Buffer[] = [];
    const emit = res.emit;
    res.emit = function (this: IncomingMessage, event: string | symbol, ...args: unknown[]) {
      if (event === 'data') {
        const chunk = args[0];
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), (res.readableEncoding ?? 'utf8') as BufferEncoding));
      } else if (event === 'end') {
        res.emit = emit;
        let body: string;
        try {
          body = decodedBody(Buffer.concat(chunks), res.headers['content-encoding']);
        } catch (err) {
          violations.push(`${req.method} ${url}: the ${res.headers['content-encoding']} body cannot be decoded: ${(err as Error).message}`);
          return emit.call(this, event, ...args);
        }
        verify({ method: req.method, url }, { status: res.statusCode ?? 0, headers: headersOf(res), body });
      }
      return emit.call(this, event, ...args);
    } as IncomingMessage['emit'];
  });
}

/** The URL a node:http call goes to, from its (url | options[, options]) arguments. */
function targetOf(args: unknown[]): string | undefined {
  const [first, second] = args;
  const opts = (typeof second === 'object' && second !== null && typeof second !== 'function' ? second : {}) as http.RequestOptions;
  try {
    if (typeof first === 'string' || first instanceof URL) {
      const url = new URL(String(first));
      if (opts.path) return new URL(opts.path, url).href;
      return url.href;
    }
    const o = first as http.RequestOptions;
    const host = o.hostname ?? o.host ?? 'localhost';
    return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}${o.port ? `:${o.port}` : ''}${o.path ?? '/'}`;
  } catch {
    return undefined;
  }
}

function checkedRequest(this: unknown, ...args: unknown[]): ClientRequest {
  const req = (originalRequest as (...a: unknown[]) => ClientRequest).apply(this, args);
  const url = targetOf(args);
  if (url && watching(url) && rawFromE2e()) watchAnswer(req, url);
  return req;
}

function checkedGet(this: unknown, ...args: unknown[]): ClientRequest {
  const req = checkedRequest.apply(this, args);
  req.end();
  return req;
}

/** Named imports (`import { request } from 'node:http'`) see the swap too. */
function useHttp(request: typeof http.request, get: typeof http.get) {
  http.request = request;
  http.get = get;
  syncBuiltinESMExports();
}

/** What the hooks found since the current test began (cleared); for the tests of these hooks. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

export const mochaHooks = {
  beforeAll() {
    globalThis.fetch = checkedFetch as typeof fetch;
    useHttp(checkedRequest as typeof http.request, checkedGet as typeof http.get);
  },
  beforeEach() {
    violations.length = 0;
  },
  afterEach(this: { currentTest?: { state?: string } }) {
    if (violations.length > 0 && this.currentTest?.state === 'passed') {
      const list = violations.splice(0);
      throw new OpenApiViolation(`The test passed, but answers it received do not match the OpenAPI document:\n  ${list.join('\n  ')}`);
    }
  },
  afterAll() {
    if (process.env.OPENAPI_VALIDATE_DEBUG) console.log('validated', state.checked);
    globalThis.fetch = original;
    useHttp(originalRequest, originalGet);
  },
};
