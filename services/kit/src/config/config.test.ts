import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './config.js';

const base = { SERVICE_CREDENTIAL: 'x'.repeat(32) };

describe('config: OUTAGE_WINDOW_MS', () => {
  it('defaults to ten minutes', () => {
    assert.equal(loadConfig({ target: 'workflows' }, base).OUTAGE_WINDOW_MS, 600_000);
  });

  it('takes a whole number of milliseconds from one second to a day, and names it when refused', () => {
    assert.equal(loadConfig({ target: 'workflows' }, { ...base, OUTAGE_WINDOW_MS: '30000' }).OUTAGE_WINDOW_MS, 30_000);
    for (const bad of ['0', '999', '1.5', 'ten', String(25 * 3600 * 1000)]) {
      assert.throws(
        () => loadConfig({ target: 'workflows' }, { ...base, OUTAGE_WINDOW_MS: bad }),
        (e: unknown) => e instanceof ConfigError && /OUTAGE_WINDOW_MS/.test(e.message),
      );
    }
  });
});
