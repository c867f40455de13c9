import assert from 'node:assert/strict';
import { z } from 'zod';
import { ValidationError } from '@supply/kit';
import { parseInput, q } from './routes';

const query = z.object({ page: q.int(1, 1_000_000).default(1), per_page: q.int(1, 100).default(25), current_index: q.int(0).optional() });

function errorsOf(input: Record<string, unknown>): Record<string, string[]> {
  try {
    parseInput(query, input);
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return { ...err.fields };
  }
  assert.fail(`${JSON.stringify(input)} was accepted`);
}

describe('query integers (q.int)', () => {
  it('reads plain decimal digits, with defaults when absent', () => {
    assert.deepEqual(parseInput(query, {}), { page: 1, per_page: 25 });
    assert.deepEqual(parseInput(query, { page: '7', per_page: '100', current_index: '0' }), { page: 7, per_page: 100, current_index: 0 });
    assert.deepEqual(parseInput(query, { current_index: '9007199254740991' }), {
      page: 1,
      per_page: 25,
      current_index: Number.MAX_SAFE_INTEGER,
    });
  });

  for (const raw of ['0x10', '1e3', ' 7', '7 ', '', '+7', '1.0', '07', 'abc', ['5'], ['5', '6'], { a: '5' }]) {
    it(`refuses ${JSON.stringify(raw)} as not an integer (422 on the field), never reading it as a number`, () => {
      assert.deepEqual(errorsOf({ per_page: raw }), { per_page: ['The per page field must be an integer.'] });
      assert.deepEqual(errorsOf({ current_index: raw }), { current_index: ['The current index field must be an integer.'] });
    });
  }

  it('refuses values past the bounds on the bound, never rounded into range', () => {
    assert.deepEqual(errorsOf({ page: '0' }), { page: ['The page field must be at least 1.'] });
    assert.deepEqual(errorsOf({ per_page: '101' }), { per_page: ['The per page field must not be greater than 100.'] });
    assert.deepEqual(errorsOf({ current_index: '-1' }), { current_index: ['The current index field must be an integer.'] });
    for (const raw of ['9007199254740992', '9007199254740993', '99999999999999999999', '9'.repeat(400)]) {
      assert.deepEqual(
        errorsOf({ current_index: raw }),
        { current_index: ['The current index field must not be greater than 9007199254740991.'] },
        raw,
      );
    }
  });

  it('documents each as an integer with its bounds and default', () => {
    const schema = z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, unknown> };
    assert.deepEqual(schema.properties.page, { default: 1, type: 'integer', minimum: 1, maximum: 1_000_000 });
    assert.deepEqual(schema.properties.per_page, { default: 25, type: 'integer', minimum: 1, maximum: 100 });
    assert.deepEqual(schema.properties.current_index, { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
  });
});
