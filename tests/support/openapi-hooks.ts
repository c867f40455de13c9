import { OpenApiValidator } from './openapi-validator';

/**
 * Mocha root hooks: every answer an e2e test receives from a local server through fetch is
 * checked against the gateway's OpenAPI document (tests/support/openapi-validator.ts). A
 * mismatch rejects that fetch, and fails the test in afterEach if the test swallowed it.
 */
const LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]']);
const original = globalThis.fetch;
let validator: OpenApiValidator | undefined;
const violations: string[] = [];
let checkedCount = 0;

export class OpenApiViolation extends Error {}

/** Calls made from an e2e test file or its support module (async stack frames included). */
const fromE2e = () => /[/\\]tests[/\\]e2e[/\\]/.test(new Error().stack ?? '');

async function checkedFetch(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
  // Not `new Request(input)`: that would consume the body of a Request passed in.
  const request =
    input instanceof Request
      ? { method: init?.method ?? input.method, url: input.url }
      : { method: init?.method ?? 'GET', url: input instanceof URL ? input.href : String(input) };
  const watched = LOCAL.has(new URL(request.url).hostname) && process.env.OPENAPI_VALIDATE !== '0' && fromE2e();
  const response = await original(input, init);
  if (!watched) return response;
  const body = await response.clone().text();
  checkedCount++;
  validator ??= new OpenApiValidator();
  const verdict = validator.check({ method: request.method, url: request.url }, { status: response.status, headers: response.headers, body });
  if (verdict.problems.length > 0) {
    violations.push(...verdict.problems);
    throw new OpenApiViolation(`The answer does not match the OpenAPI document:\n  ${verdict.problems.join('\n  ')}`);
  }
  return response;
}

export const mochaHooks = {
  beforeAll() {
    globalThis.fetch = checkedFetch as typeof fetch;
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
    if (process.env.OPENAPI_VALIDATE_DEBUG) console.log("validated", checkedCount);
    globalThis.fetch = original;
  },
};
