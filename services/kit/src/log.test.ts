import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config/config';
import { createLogger } from './log';

/** A logger writing into an array of parsed lines. */
function capture(redact: readonly string[]) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', 'test', redact, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

describe('logger redaction', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'log-unit-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('always redacts tokens and passwords, and the fields LOG_REDACT adds', () => {
    const config = loadConfig({ target: 'all', DATA_DIR: dataDir }, { LOG_REDACT: 'user_email, *.secret_note,headers["x-api-key"]' });
    assert.deepEqual(config.LOG_REDACT, ['user_email', '*.secret_note', 'headers["x-api-key"]']);
    const { logger, lines } = capture(config.LOG_REDACT);
    logger.info({ token: 't', user_email: 'a@b.c', job: { secret_note: 'x', kept: 1 }, headers: { 'x-api-key': 'k' } }, 'hello');
    const line = lines[0]!;
    assert.equal(line.token, '[redacted]');
    assert.equal(line.user_email, '[redacted]');
    assert.deepEqual(line.job, { secret_note: '[redacted]', kept: 1 });
    assert.deepEqual(line.headers, { 'x-api-key': '[redacted]' });
  });

  it('refuses a LOG_REDACT that is not a list of field paths', () => {
    assert.throws(
      () => loadConfig({ target: 'all', DATA_DIR: dataDir }, { LOG_REDACT: 'a..b' }),
      (err: Error) => err instanceof ConfigError && /LOG_REDACT/.test(err.message),
    );
  });
});
