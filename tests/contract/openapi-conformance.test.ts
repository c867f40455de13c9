import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OpenApiValidator } from '../support/openapi-validator';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

describe('OpenAPI conformance tooling', function () {
  this.timeout(120_000);

  it('npm run lint:openapi passes Redocly with every rule an error and no warning', async () => {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'lint:openapi'], { cwd: ROOT });
    assert.match(stdout + stderr, /Your API description is valid/);
    assert.doesNotMatch(stdout + stderr, /You have \d+ warning/);
  });

  it('the same lint fails a document with a duplicate operationId, or an operation without a 4xx answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    await run('npx', ['tsx', 'gateway/scripts/write-openapi.ts', join(dir, 'good.json')], { cwd: ROOT });
    const doc = JSON.parse(readFileSync(join(dir, 'good.json'), 'utf8'));
    doc.paths['/{tenant}/api/v1/uoms'].get.operationId = doc.paths['/{tenant}/api/v1/items'].get.operationId;
    // /healthz answers only 200 and 431; without the 431 it has no 4xx.
    delete doc.paths['/healthz'].get.responses['431'];
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(doc));
    await assert.rejects(
      run('npx', ['redocly', 'lint', join(dir, 'bad.json'), '--config', 'redocly.yaml'], { cwd: ROOT }),
      (err: { stdout: string; stderr: string }) => {
        assert.match(err.stdout + err.stderr, /operation-operationId-unique/);
        assert.match(err.stdout + err.stderr, /operation-4xx-response/);
        return true;
      },
    );
  });

  describe('the response validator of the e2e suite', () => {
    const validator = new OpenApiValidator();
    const url = 'http://127.0.0.1:1/acme/api/v1/uoms/1';
    const uom = { id: 1, name: 'Each', abbreviation: 'ea', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' };
    const ok = { data: [uom], meta: {}, links: '/acme/api/v1/uoms/1' };
    const headers = (extra: Record<string, string> = {}) =>
      new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'abc', ...extra });

    it('accepts a documented answer', () => {
      assert.deepEqual(
        validator.check(
          { method: 'GET', url },
          { status: 200, headers: headers({ RateLimit: '"default";r=1;t=2', 'Credits-Remaining': '5' }), body: JSON.stringify(ok) },
        ).problems,
        [],
      );
    });

    it('refuses an undocumented status, a body off its schema, a missing X-Request-Id and a malformed header', () => {
      const cases: Array<[number, Headers, unknown, RegExp]> = [
        [500, headers(), { type: '/problems/internal-error' }, /status 500 is not documented/],
        [201, headers(), ok, /status 201 is not documented/],
        [200, headers(), { ...ok, data: [{ ...uom, colour: 'red' }] }, /additional properties \(colour\)/],
        [200, headers(), { ...ok, data: [{ ...uom, id: 'one' }] }, /must be integer/],
        [200, new Headers({ 'content-type': 'application/json' }), ok, /X-Request-Id is required/],
        [200, headers({ 'Credits-Remaining': 'many' }), ok, /Credits-Remaining/],
        [200, headers({ 'content-type': 'text/html' }), ok, /content type text\/html is not documented/],
        [404, headers({ 'content-type': 'application/problem+json' }), { type: '/problems/not-found' }, /must have required property/],
      ];
      for (const [status, h, body, expected] of cases) {
        const verdict = validator.check({ method: 'GET', url }, { status, headers: h, body: JSON.stringify(body) });
        assert.match(verdict.problems.join('\n'), expected, `${status} ${JSON.stringify(body)}`);
      }
    });

    it('refuses anything but a 404, 405, 503 or 504 problem on an API path the document does not name', () => {
      const unknown = 'http://127.0.0.1:1/acme/api/v1/nothing-here';
      assert.match(
        validator.check({ method: 'GET', url: unknown }, { status: 200, headers: headers(), body: '{}' }).problems.join(''),
        /not in the document/,
      );
      const problem = {
        type: '/problems/not-found',
        title: 'Not found',
        status: 404,
        detail: 'No route.',
        instance: '/acme/api/v1/nothing-here',
        request_id: 'abc',
      };
      assert.deepEqual(
        validator.check({ method: 'GET', url: unknown }, { status: 404, headers: headers(), body: JSON.stringify(problem) }).problems,
        [],
      );
    });
  });
});
