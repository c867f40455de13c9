import assert from 'node:assert/strict';
import { JSON_DEPTH_DETAIL, jsonTextTooDeep, verifyJsonDepth } from './edge';

const nest = (n: number, inner = '') => '['.repeat(n) + inner + ']'.repeat(n);
const utf8 = (text: string) => Buffer.from(text, 'utf8');
/** UTF-16 or UTF-32 bytes of `text` (BMP only), in either byte order, with or without a BOM. */
function wide(text: string, size: 2 | 4, littleEndian: boolean, bom = false): Buffer {
  const units = [...(bom ? [0xfeff] : []), ...Array.from(text, (c) => c.charCodeAt(0))];
  const out = Buffer.alloc(units.length * size);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  units.forEach((u, i) => (size === 2 ? view.setUint16(i * 2, u, littleEndian) : view.setUint32(i * 4, u, littleEndian)));
  return out;
}

describe('JSON nesting measured on the raw text (jsonTextTooDeep)', () => {
  it('counts arrays and objects, the top level as 1, up to the limit', () => {
    assert.equal(jsonTextTooDeep(utf8(nest(64))), false);
    assert.equal(jsonTextTooDeep(utf8(nest(65))), true);
    assert.equal(jsonTextTooDeep(utf8('{"a":' + '{"b":'.repeat(63) + '1' + '}'.repeat(64))), false);
    assert.equal(jsonTextTooDeep(utf8('{"a":' + '{"b":'.repeat(64) + '1' + '}'.repeat(65))), true);
    // Siblings do not add up: depth is what is open at once.
    assert.equal(jsonTextTooDeep(utf8(`[${Array.from({ length: 1000 }, () => nest(60)).join(',')}]`)), false);
    assert.equal(jsonTextTooDeep(utf8('"text"')), false);
    assert.equal(jsonTextTooDeep(utf8('')), false);
  });

  it('stops at the first bracket past the limit, however long or unterminated the text', () => {
    assert.equal(jsonTextTooDeep(utf8('['.repeat(2_000_000))), true);
    assert.equal(jsonTextTooDeep(utf8('{"data":' + '['.repeat(65))), true);
  });

  it('ignores brackets inside strings, escaped quotes and backslashes included', () => {
    assert.equal(jsonTextTooDeep(utf8(JSON.stringify({ name: '['.repeat(500) + '{'.repeat(500) }))), false);
    assert.equal(jsonTextTooDeep(utf8(JSON.stringify({ name: '"[[[' + '\\'.repeat(3) + '"' + '['.repeat(100) }))), false);
    assert.equal(jsonTextTooDeep(utf8(JSON.stringify([['\\', nest(62)]]))), false);
    // After a string that ends in an escaped backslash, brackets count again.
    assert.equal(jsonTextTooDeep(utf8(`["\\\\",${nest(64)}]`)), true);
    // Non-ASCII text never reads as a bracket or a quote.
    assert.equal(jsonTextTooDeep(utf8(JSON.stringify({ name: '\u5b5b\u7b7b\u225c\u2222 ü €' + '['.repeat(100) }))), false);
  });

  for (const size of [2, 4] as const) {
    for (const littleEndian of [true, false]) {
      const bits = size * 8;
      const named = `utf-${bits}${littleEndian ? 'le' : 'be'}`;
      it(`reads UTF-${bits} ${littleEndian ? 'LE' : 'BE'} by its code units, named or found by BOM or first character`, () => {
        for (const [charset, bom] of [
          [named, false],
          [`utf-${bits}`, true],
          [`utf-${bits}`, false],
        ] as const) {
          assert.equal(jsonTextTooDeep(wide(nest(64), size, littleEndian, bom), charset), false, `${charset} bom=${bom}`);
          assert.equal(jsonTextTooDeep(wide(nest(65), size, littleEndian, bom), charset), true, `${charset} bom=${bom}`);
          // U+5B00 and U+005B share a byte: only the code unit decides.
          assert.equal(jsonTextTooDeep(wide(JSON.stringify(['\u5b00'.repeat(100) + '\u225c']), size, littleEndian, bom), charset), false);
        }
      });
    }
  }

  it('refuses a charset JSON is not written in (UTF-7) as unsupported, and a deep body with the depth detail', () => {
    assert.equal(jsonTextTooDeep(utf8('[]'), 'utf-7'), null);
    assert.throws(
      () => verifyJsonDepth(null, null, utf8('[]'), 'utf-7'),
      (err: any) => err.type === 'charset.unsupported',
    );
    assert.throws(
      () => verifyJsonDepth(null, null, utf8(nest(65)), 'utf-8'),
      (err: any) => err.type === 'json.too.deep' && err.message === JSON_DEPTH_DETAIL,
    );
    assert.doesNotThrow(() => verifyJsonDepth(null, null, utf8(nest(64)), 'utf-8'));
  });
});
