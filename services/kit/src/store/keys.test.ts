import { strict as assert } from 'node:assert';
import { encodeValue, KeyBuilder, sortComponent, valuesAtPath } from './keys';

/** MongoDB's sort order across the types the store keeps (simple collation, numbers by value). */
const ASCENDING: unknown[] = [
  [],
  null,
  -1e300,
  -5.5,
  -1,
  0,
  1e-300,
  1,
  2 ** 40,
  1e300,
  '',
  '\u0000',
  'A',
  'a',
  'a\u0000',
  'a\u0000b',
  'ab',
  'b',
  'é',
  '中',
  {},
  { a: 1 },
  { a: 1, b: 0 },
  { a: 2 },
  { b: 0 },
  [1],
  [1, 2],
  [2],
  false,
  true,
];

describe('store keys: order-preserving value encoding', () => {
  it('orders values across and within types as MongoDB sorts them', () => {
    const encoded = ASCENDING.map((value) => encodeValue(value));
    for (let i = 1; i < encoded.length; i++) {
      assert.ok(Buffer.compare(encoded[i - 1]!, encoded[i]!) < 0, `${JSON.stringify(ASCENDING[i - 1])} < ${JSON.stringify(ASCENDING[i])}`);
    }
  });

  it('reverses the order exactly for descending components', () => {
    const encoded = ASCENDING.map((value) => encodeValue(value, -1));
    for (let i = 1; i < encoded.length; i++) assert.ok(Buffer.compare(encoded[i - 1]!, encoded[i]!) > 0);
  });

  it('treats missing as null and -0 as 0', () => {
    assert.deepEqual(encodeValue(undefined), encodeValue(null));
    assert.deepEqual(encodeValue(-0), encodeValue(0));
  });

  it('orders compound keys by their first field whatever follows (components are prefix-free)', () => {
    const pairs: Array<[unknown, unknown]> = [
      [null, 'zzzz'],
      [7, true],
      ['a', 5],
      ['a\u0000', 0],
      ['ab', -1],
      ['b', null],
      [{ a: 'x' }, 'x'],
    ];
    for (const direction of [1, -1] as const) {
      const keys = pairs.map(([first, second]) => new KeyBuilder().value(first).value(second, direction).toBuffer());
      for (let i = 1; i < keys.length; i++) assert.ok(Buffer.compare(keys[i - 1]!, keys[i]!) < 0);
    }
  });

  it('reads dotted paths through arrays as MongoDB does', () => {
    const document = { a: { b: 1 }, list: [{ x: 1 }, { x: 2 }, { y: 3 }], tags: ['p', 'q'], empty: [] };
    assert.deepEqual(valuesAtPath(document, ['a', 'b']), { values: [1], multi: false });
    assert.deepEqual(valuesAtPath(document, ['missing', 'b']), { values: [undefined], multi: false });
    assert.deepEqual(valuesAtPath(document, ['list', 'x']), { values: [1, 2, undefined], multi: true });
    assert.deepEqual(valuesAtPath(document, ['list', '1', 'x']), { values: [2], multi: true });
    assert.deepEqual(valuesAtPath(document, ['tags']), { values: ['p', 'q'], multi: true });
    assert.deepEqual(valuesAtPath(document, ['empty']), { values: [[]], multi: true });
  });

  it('sorts an array field by its smallest element ascending and its largest descending', () => {
    const document = { scores: [5, 1, 9] };
    assert.deepEqual(sortComponent(document, ['scores'], 1), encodeValue(1));
    assert.deepEqual(sortComponent(document, ['scores'], -1), encodeValue(9));
  });
});
