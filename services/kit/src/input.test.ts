import assert from 'node:assert/strict';
import { addFieldError, fieldErrors, jsonTooDeep, parseDecimal, parseId, TENANT_SLUG } from './input';

describe('client input helpers', () => {
  it('parses ids as positive safe integers in plain decimal only', () => {
    assert.equal(parseId('1'), 1);
    assert.equal(parseId('9007199254740991'), Number.MAX_SAFE_INTEGER);
    for (const raw of [
      '9007199254740992',
      '9007199254740993',
      '99999999999999999999',
      '0',
      '01',
      '-1',
      '1e3',
      '0x10',
      '1.5',
      ' 1',
      '',
      undefined,
      'abc',
    ]) {
      assert.equal(parseId(raw), null, String(raw));
    }
    assert.equal(parseId(2 ** 53), null);
  });

  it('reads a query or path integer only in plain decimal digits', () => {
    assert.equal(parseDecimal('0'), 0);
    assert.equal(parseDecimal('7'), 7);
    assert.equal(parseDecimal('5000'), 5000);
    // Digits past 2^53 - 1 still read as digits; the caller's bound refuses them, unrounded into range.
    assert.ok(parseDecimal('99999999999999999999')! > Number.MAX_SAFE_INTEGER);
    const refused = [
      '0x10',
      '1e3',
      ' 7',
      '7 ',
      '',
      '-1',
      '+1',
      '1.5',
      '1.',
      '01',
      '00',
      '٣',
      'Infinity',
      'NaN',
      ['5'],
      { a: '5' },
      5,
      undefined,
      null,
    ];
    for (const raw of refused) {
      assert.equal(parseDecimal(raw), null, JSON.stringify(raw));
    }
  });

  it('measures JSON nesting without recursion, however deep', () => {
    const nest = (n: number): unknown => {
      let v: unknown = [];
      for (let i = 1; i < n; i++) v = i % 2 ? { a: v } : [v];
      return v;
    };
    assert.equal(jsonTooDeep(nest(64)), false);
    assert.equal(jsonTooDeep(nest(65)), true);
    assert.equal(jsonTooDeep(nest(200_000)), true);
    assert.equal(jsonTooDeep('text'), false);
    assert.equal(jsonTooDeep(null), false);
  });

  it('collects field errors under any path, prototype names included', () => {
    const fields = fieldErrors();
    for (const key of ['__proto__', 'constructor', 'toString', 'name']) {
      addFieldError(fields, key, 'first');
      addFieldError(fields, key, 'second');
    }
    assert.deepEqual(JSON.parse(JSON.stringify(fields)), {
      ['__proto__']: ['first', 'second'],
      constructor: ['first', 'second'],
      toString: ['first', 'second'],
      name: ['first', 'second'],
    });
    // A plain object works the same.
    const plain: Record<string, string[]> = {};
    addFieldError(plain, '__proto__', 'x');
    assert.deepEqual(Object.keys(plain), ['__proto__']);
    assert.equal(Object.getPrototypeOf(plain), Object.prototype);
  });

  it('knows a tenant slug', () => {
    for (const ok of ['demo', 'acme-2', 'a', 'a'.repeat(63)]) assert.ok(TENANT_SLUG.test(ok), ok);
    for (const bad of ['', 'Demo', '-demo', 'de mo', 'de\u0000mo', 'a'.repeat(64), 'dé']) assert.ok(!TENANT_SLUG.test(bad), bad);
  });
});
