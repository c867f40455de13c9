import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

describe('the typed client (@supply/client)', function () {
  this.timeout(120_000);

  it('is generated from the document the gateway code builds now (run npm run client:gen after a route change)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'typed-client-'));
    await run('npx', ['tsx', 'gateway/scripts/write-openapi.ts', join(dir, 'openapi.json')], { cwd: ROOT });
    await run('npx', ['openapi-typescript', join(dir, 'openapi.json'), '--output', join(dir, 'schema.ts')], {
      cwd: join(ROOT, 'clients/typescript'),
    });
    const committed = readFileSync(join(ROOT, 'clients/typescript/src/schema.ts'), 'utf8');
    assert.ok(
      readFileSync(join(dir, 'schema.ts'), 'utf8') === committed,
      'clients/typescript/src/schema.ts is out of date: npm run client:gen',
    );
  });
});
