import assert from 'node:assert/strict';
import { z } from 'zod';
import { fieldErrorsFromZod } from './validation';

const strict = z.strictObject({ name: z.string() });

function errorsOf(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input, { reportInput: true });
  assert.equal(result.success, false);
  return fieldErrorsFromZod(result.error!);
}

describe('fieldErrorsFromZod', () => {
  for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`names an unknown key ${key} like any other`, () => {
      const fields = errorsOf(strict, JSON.parse(`{"name": "x", "${key}": 1}`));
      assert.deepEqual(Object.keys(fields), [key]);
      assert.deepEqual(fields[key], [`The ${key} field is prohibited.`]);
      assert.deepEqual(JSON.parse(JSON.stringify(fields)), { [key]: fields[key] });
    });
  }

  it('keeps several messages for one prototype-named path', () => {
    const schema = z.object({ constructor: z.string().min(3).regex(/^a/) });
    const fields = errorsOf(schema, { constructor: 'b' });
    assert.equal(fields.constructor!.length, 2);
  });

  it('says what a body of the wrong type must be, without an empty field name', () => {
    assert.deepEqual({ ...errorsOf(strict, [1, 2]) }, { body: ['The request body must be a JSON object.'] });
    assert.deepEqual({ ...errorsOf(z.array(z.number()), { a: 1 }) }, { body: ['The request body must be a JSON array.'] });
  });

  it('names the request body in every message about a top-level body, never an empty field', () => {
    const list = z.array(z.object({})).min(1).max(3);
    assert.deepEqual({ ...errorsOf(list, []) }, { body: ['The request body must have at least 1 item.'] });
    assert.deepEqual({ ...errorsOf(list, [{}, {}, {}, {}]) }, { body: ['The request body must not have more than 3 items.'] });
    assert.deepEqual({ ...errorsOf(z.string().min(2), 'a') }, { body: ['The request body must be at least 2 characters.'] });
    assert.deepEqual({ ...errorsOf(z.enum(['a']), 'b') }, { body: ['The request body is invalid.'] });
    assert.deepEqual({ ...errorsOf(z.object({ a: z.string() }), undefined) }, { body: ['The request body is required.'] });
    // A nested path keeps its field name.
    assert.deepEqual({ ...errorsOf(z.object({ data: list }), { data: [] }) }, { data: ['The data field must have at least 1 item.'] });
  });
});
