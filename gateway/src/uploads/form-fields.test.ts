import assert from 'node:assert/strict';
import { setFormField } from './form-fields';

function form(pairs: Array<[string, string]>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of pairs) setFormField(fields, name, value);
  return fields;
}

describe('form fields', () => {
  it('nests brackets, appends [] and sets indexes as keys', () => {
    const fields = form([
      ['scope[sale_type]', 'History'],
      ['field_mappings[]', 'a'],
      ['field_mappings[]', 'b'],
      ['options[x]', '1'],
      ['field_mappings2[99999999]', 'c'],
    ]);
    assert.deepEqual(JSON.parse(JSON.stringify(fields)), {
      scope: { sale_type: 'History' },
      field_mappings: ['a', 'b'],
      options: { x: '1' },
      field_mappings2: { '99999999': 'c' },
    });
  });

  it('keeps prototype-named fields as plain fields and pollutes nothing', () => {
    const fields = form([
      ['__proto__', 'x'],
      ['__proto__[polluted]', 'yes'],
      ['scope[__proto__]', 'History'],
      ['scope[constructor][prototype]', 'y'],
      ['constructor', 'z'],
      ['toString', 't'],
    ]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(fields), Object.prototype);
    const json = JSON.parse(JSON.stringify(fields));
    assert.deepEqual(Object.keys(json).sort(), ['__proto__', 'constructor', 'scope', 'toString']);
    assert.deepEqual(Object.keys(json.scope).sort(), ['__proto__', 'constructor']);
    assert.equal(json.toString, 't');
  });
});
