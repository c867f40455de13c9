import assert from 'node:assert/strict';
import { ValidationError } from '@supply/kit';
import { MAX_COLUMNS, parseImportFields, parseJsonLoad } from './request';
import { SALES } from './entities';

function fieldsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return { ...err.fields };
  }
  assert.fail('expected a ValidationError');
}

describe('import form fields', () => {
  it('refuses a field_mappings index past the column limit at once, allocating nothing by it', () => {
    for (const index of ['99999999', '400000000', String(MAX_COLUMNS)]) {
      const started = performance.now();
      const fields = fieldsOf(() => parseImportFields('sales', 'sync', { field_mappings: { 0: 'item_name', [index]: 'quantity' } }));
      assert.ok(performance.now() - started < 100, `index ${index} took ${performance.now() - started} ms`);
      assert.deepEqual(Object.keys(fields), [`field_mappings.${index}`]);
      assert.match(fields[`field_mappings.${index}`]![0]!, new RegExp(`below ${MAX_COLUMNS}`));
    }
  });

  it('still maps bracket indexes below the limit, gaps as skipped columns', () => {
    const mapping: Record<string, string> = {};
    SALES.fields.forEach((field, i) => (mapping[String(i * 2)] = field));
    const { file } = parseImportFields('sales', 'sync', { field_mappings: mapping });
    assert.equal(file.field_mappings!.length, SALES.fields.length * 2 - 1);
    assert.equal(file.field_mappings![1], null);
    assert.equal(file.field_mappings![2], SALES.fields[1]);
  });

  it('refuses a JSON list of mappings longer than the column limit', () => {
    const list = JSON.stringify(Array.from({ length: MAX_COLUMNS + 1 }, () => ''));
    assert.deepEqual(Object.keys(fieldsOf(() => parseImportFields('sales', 'sync', { field_mappings: list }))), ['field_mappings']);
  });

  it('takes a JSON form field nested past the depth limit as the string it is', () => {
    const deep = '{"sale_type_name":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
    assert.deepEqual(fieldsOf(() => parseImportFields('sales', 'sync', { mode: 'replace', scope: deep })), { scope: ['The scope field must be an object.'] });
  });

  it('names prototype-named keys of a body like any other field', () => {
    const fields = fieldsOf(() => parseJsonLoad('sales', 'sync', JSON.parse('{"data": [], "scope": {"__proto__": "x", "constructor": "y"}, "mode": "replace"}')));
    assert.ok(fields['scope.__proto__'] && fields['scope.constructor'] && fields.data, JSON.stringify(fields));
  });
});
