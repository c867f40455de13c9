import { strict as assert } from 'node:assert';
import { Query } from 'mingo';
import { seededRandom } from '../random';
import { compileFilter } from './documents';
import type { Doc, Filter } from './store';

describe('store filters: the scalar fast path', () => {
  const next = seededRandom(20261128);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const FIELDS = ['a', 'b', 'c'];
  // What documents hold: scalars of every type, near-equal numbers, arrays and objects (left to mingo), nulls and gaps.
  const VALUES: unknown[] = [
    0,
    -0,
    1,
    1.5,
    2,
    -3,
    '1',
    '',
    'x',
    'ready',
    true,
    false,
    null,
    undefined,
    [1, 'x'],
    [],
    ['ready'],
    { a: 1 },
    new Date(5),
    NaN,
  ];
  const SCALARS = [0, 1, 1.5, 2, -3, '1', '', 'x', 'ready', true, false];

  function randomDoc(): Doc {
    const doc: Record<string, unknown> = { _id: Math.floor(next() * 1000) };
    for (const f of FIELDS) {
      const v = pick(VALUES);
      if (v !== undefined) doc[f] = v;
    }
    return doc as Doc;
  }

  function randomFilter(): Filter {
    const filter: Record<string, unknown> = {};
    for (const f of FIELDS) {
      const roll = next();
      if (roll < 0.35) continue;
      if (roll < 0.65) filter[f] = pick(SCALARS);
      else if (roll < 0.75) filter[f] = { $eq: pick(SCALARS) };
      else {
        const condition: Record<string, number> = {};
        condition[pick(['$lt', '$lte', '$gt', '$gte'])] = pick([0, 1, 1.5, 2, -3]);
        if (next() < 0.4) condition[pick(['$lt', '$lte', '$gt', '$gte'])] = pick([0, 1, 2]);
        filter[f] = condition;
      }
    }
    return filter as Filter;
  }

  it('matches exactly what mingo matches, on 5,000 random filters and documents', () => {
    let matched = 0;
    for (let i = 0; i < 5000; i++) {
      const filter = randomFilter();
      const doc = randomDoc();
      const expected = new Query(filter as ConstructorParameters<typeof Query>[0]).test(doc);
      assert.equal(
        compileFilter(filter)(doc),
        expected,
        `${JSON.stringify(filter)} on ${JSON.stringify(doc)} (${String(doc.a)}, ${String(doc.b)}, ${String(doc.c)})`,
      );
      if (expected) matched++;
    }
    assert.ok(matched > 200, `only ${matched} matches: the sample says little`);
  });

  it('leaves an array or object field to MongoDB semantics (an array matches when an element does)', () => {
    assert.equal(compileFilter({ tags: 'x' } as Filter)({ _id: 1, tags: ['a', 'x'] } as Doc), true);
    assert.equal(compileFilter({ n: { $lte: 2 } } as Filter)({ _id: 1, n: [5, 1] } as Doc), true);
    assert.equal(compileFilter({ n: { $lte: 2 } } as Filter)({ _id: 1, n: [5, 3] } as Doc), false);
  });

  it('compares numbers with numbers only, and misses absent fields', () => {
    assert.equal(compileFilter({ n: { $lte: 2 } } as Filter)({ _id: 1, n: '1' } as Doc), false);
    assert.equal(compileFilter({ n: { $gte: 0 } } as Filter)({ _id: 1 } as Doc), false);
    assert.equal(compileFilter({ s: 'ready', n: { $lte: 2 } } as Filter)({ _id: 1, s: 'ready', n: 2 } as Doc), true);
    assert.equal(compileFilter({ constructor: 'x' } as Filter)({ _id: 1 } as Doc), false);
  });

  it('still refuses an invalid filter', () => {
    assert.throws(() => compileFilter({ a: { $nope: 1 } } as Filter), /Invalid filter/);
  });
});
