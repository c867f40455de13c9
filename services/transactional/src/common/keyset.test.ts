import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, seededRandom, type Collection, type Doc, type Store } from '@supply/kit';
import {
  compareBySort,
  keysetCondition,
  keysetPage,
  positionOf,
  type KeysetPage,
  type KeysetQuery,
  type Scalar,
  type SortKey,
} from './keyset';
import { tenantIndex } from './records';

interface Row extends Doc {
  _id: number;
  tenant: string;
  item: string;
  day: string;
  qty: number;
}

const ITEMS = ['a', 'b', 'c', 'd', 'é', 'Z'];

describe('keyset pages on the embedded store', function () {
  this.timeout(60_000);
  let dir: string;
  let store: Store;
  let rows: Collection<Row>;
  let all: Row[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyset-'));
    store = await openStore({ database: 'keyset', dataDir: dir });
    rows = await store.collection<Row>({
      name: 'rows',
      autoIncrement: true,
      indexes: [
        tenantIndex('tenant_id', '_id'),
        tenantIndex('day', 'day', '_id'),
        tenantIndex('item_day', 'item', 'day', '_id'),
        tenantIndex('item_day_desc', 'item', ['day', -1], ['_id', -1]),
        tenantIndex('qty', 'qty', '_id'),
      ],
    });
    const random = seededRandom(7);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const make = (tenant: string) => ({
      tenant,
      item: pick(ITEMS),
      day: `2025-01-${String(1 + Math.floor(random() * 9)).padStart(2, '0')}`,
      // Few distinct quantities, so ties on the sort keys are common.
      qty: pick([0, 1.5, 2, 2, 3, 10]),
    });
    await rows.insertMany(Array.from({ length: 600 }, () => make('t1')) as Array<Omit<Row, '_id'>>);
    await rows.insertMany(Array.from({ length: 50 }, () => make('t2')) as Array<Omit<Row, '_id'>>);
    all = await rows.find({});
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const matches = (row: Row, query: Pick<KeysetQuery, 'equals' | 'ranges'>) =>
    Object.entries(query.equals).every(([field, values]) => values.includes(row[field] as Scalar)) &&
    Object.entries(query.ranges ?? {}).every(
      ([field, { from, to }]) =>
        (from === undefined || (row[field] as string) >= (from as string)) &&
        (to === undefined || (row[field] as string) <= (to as string)),
    );

  /** Walks forward to the end, then back from the last page by backward positions. */
  async function walk(query: Omit<KeysetQuery, 'after' | 'backward' | 'limit'>, limit: number) {
    const forward: Row[][] = [];
    let after: Scalar[] | undefined;
    for (;;) {
      const page = await keysetPage(rows, { ...query, limit, after });
      forward.push(page.records);
      if (!page.hasMore) break;
      assert.equal(page.records.length, limit, 'every page but the last is full');
      after = positionOf(page.records[page.records.length - 1]!, query.sort);
    }
    const backward: Row[][] = [forward[forward.length - 1]!];
    let before: Row | undefined = forward[forward.length - 1]![0];
    while (before) {
      const page: KeysetPage<Row> = await keysetPage(rows, { ...query, limit, after: positionOf(before, query.sort), backward: true });
      if (page.records.length === 0) break;
      backward.unshift(page.records);
      before = page.hasMore ? page.records[0] : undefined;
    }
    return { forward, backward };
  }

  const cases: Array<[string, Pick<KeysetQuery, 'equals' | 'ranges' | 'fanOut'>, SortKey[]]> = [
    ['id', { equals: { tenant: ['t1'] } }, [{ field: '_id', direction: 1 }]],
    [
      '-qty, -id',
      { equals: { tenant: ['t1'] } },
      [
        { field: 'qty', direction: -1 },
        { field: '_id', direction: -1 },
      ],
    ],
    [
      'item, -day, -id',
      { equals: { tenant: ['t1'] } },
      [
        { field: 'item', direction: 1 },
        { field: 'day', direction: -1 },
        { field: '_id', direction: -1 },
      ],
    ],
    [
      'item in (a, é) split, day range, day',
      { equals: { tenant: ['t1'], item: ['a', 'é'] }, ranges: { day: { from: '2025-01-03', to: '2025-01-07' } }, fanOut: ['item'] },
      [
        { field: 'day', direction: 1 },
        { field: '_id', direction: 1 },
      ],
    ],
    [
      'item in (b, c) split, item, day',
      { equals: { tenant: ['t1'], item: ['c', 'b'] }, fanOut: ['item'] },
      [
        { field: 'item', direction: 1 },
        { field: 'day', direction: 1 },
        { field: '_id', direction: 1 },
      ],
    ],
    [
      'item = d, -day',
      { equals: { tenant: ['t1'], item: ['d'] } },
      [
        { field: 'day', direction: -1 },
        { field: '_id', direction: -1 },
      ],
    ],
    [
      'unserved: qty, -id',
      { equals: { tenant: ['t1'] } },
      [
        { field: 'qty', direction: 1 },
        { field: '_id', direction: -1 },
      ],
    ],
  ];

  for (const [name, conditions, sort] of cases) {
    it(`walks ${name} forward and back, page for page, as an in-memory sort says`, async () => {
      const expected = all.filter((row) => matches(row, conditions)).sort((a, b) => compareBySort(a, b, sort));
      assert.ok(expected.length > 20, 'the case has data');
      const { forward, backward } = await walk({ ...conditions, sort }, 7);
      assert.deepEqual(
        forward.flat().map((row) => row._id),
        expected.map((row) => row._id),
      );
      assert.deepEqual(
        backward.map((page) => page.map((row) => row._id)),
        forward.map((page) => page.map((row) => row._id)),
      );
    });
  }

  it('never shows another tenant', async () => {
    const page = await keysetPage(rows, { equals: { tenant: ['t2'] }, sort: [{ field: '_id', direction: 1 }], limit: 1000 });
    assert.equal(page.records.length, 50);
    assert.ok(page.records.every((row) => row.tenant === 't2'));
  });
});

describe('keysetCondition', () => {
  const sort: SortKey[] = [
    { field: 'item', direction: 1 },
    { field: 'day', direction: -1 },
    { field: '_id', direction: -1 },
  ];

  it('is the lexicographic "after" as disjuncts', () => {
    assert.deepEqual(keysetCondition(sort, ['b', '2025-01-02', 9], new Map()), [
      { item: { $gt: 'b' } },
      { item: 'b', day: { $lt: '2025-01-02' } },
      { item: 'b', day: '2025-01-02', _id: { $lt: 9 } },
    ]);
  });

  it('drops a pinned key: inside the position, before it, after it', () => {
    assert.deepEqual(keysetCondition(sort, ['b', '2025-01-02', 9], new Map([['item', 'b']])), [
      { day: { $lt: '2025-01-02' } },
      { day: '2025-01-02', _id: { $lt: 9 } },
    ]);
    assert.equal(keysetCondition(sort, ['b', '2025-01-02', 9], new Map([['item', 'a']])), false);
    assert.equal(keysetCondition(sort, ['b', '2025-01-02', 9], new Map([['item', 'c']])), true);
  });
});
