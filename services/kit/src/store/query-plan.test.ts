import { strict as assert } from 'node:assert';
import { compileFilter } from './documents';
import type { Doc, Filter, Sort } from './store';
import { encodePrefix, KeyBuilder, sortComponent } from './keys';
import { planQuery, type PlannableIndex, type QueryPlan } from './query-plan';

const primary: PlannableIndex = {
  name: '_id_',
  fields: [{ path: '_id', direction: 1 }],
  unique: true,
  primary: true,
  prefix: encodePrefix('sales'),
  idTail: false,
};

function secondary(name: string, keys: Array<[string, 1 | -1]>, unique = false): PlannableIndex {
  return {
    name,
    fields: keys.map(([path, direction]) => ({ path, direction })),
    unique,
    primary: false,
    prefix: encodePrefix('sales', name),
    idTail: !unique && keys[keys.length - 1]![0] !== '_id',
  };
}

const tenantDate = secondary('tenant_date', [
  ['tenant', 1],
  ['sell_date', 1],
  ['_id', 1],
]);
const tenantId = secondary('tenant_id', [
  ['tenant', 1],
  ['_id', 1],
]);
const natural = secondary(
  'natural',
  [
    ['tenant', 1],
    ['sku', 1],
  ],
  true,
);
const byAmountDesc = secondary('amount_desc', [['amount', -1]]);
const all = [primary, tenantDate, tenantId, natural, byAmountDesc];

function entryKey(index: PlannableIndex, document: Record<string, unknown>): Buffer {
  const builder = KeyBuilder.from(index.prefix);
  for (const { path, direction } of index.fields) builder.value(document[path], direction);
  if (index.idTail) builder.value(document['_id']);
  return builder.toBuffer();
}

function inRanges(plan: QueryPlan, key: Buffer): boolean {
  return plan.ranges.some((range) => Buffer.compare(range.start, key) <= 0 && Buffer.compare(key, range.end) < 0);
}

describe('store query planner', () => {
  it('seeks a keyset page on tenant + _id with the range on _id and serves the _id sort', () => {
    const plan = planQuery(all, { tenant: 't', _id: { $gt: 123456 } }, [['_id', 1]]);
    assert.equal(plan.index.name, 'tenant_id');
    assert.equal(plan.boundFields, 2);
    assert.equal(plan.sortServed, true);
    assert.equal(plan.reverse, false);
    assert.equal(plan.covered, true);
  });

  it('scans backwards for the reverse sort', () => {
    const plan = planQuery(all, { tenant: 't', sell_date: { $lt: '2024-06-01' } }, [
      ['sell_date', -1],
      ['_id', -1],
    ]);
    assert.equal(plan.index.name, 'tenant_date');
    assert.deepEqual([plan.sortServed, plan.reverse, plan.boundFields], [true, true, 2]);
  });

  it('does not serve a sort whose directions disagree with the index', () => {
    const plan = planQuery([primary, tenantDate], { tenant: 't' }, [
      ['sell_date', 1],
      ['_id', -1],
    ]);
    assert.equal(plan.index.name, 'tenant_date');
    assert.equal(plan.sortServed, false);
  });

  it('ignores sort keys pinned by equality and stops at _id (a total order)', () => {
    const plan = planQuery(all, { tenant: 't', sell_date: '2024-01-01' }, [
      ['tenant', 1],
      ['sell_date', 1],
      ['_id', 1],
      ['qty', -1],
    ]);
    assert.equal(plan.index.name, 'tenant_date');
    assert.deepEqual([plan.sortServed, plan.boundFields], [true, 2]);
  });

  it('fans $in out into one range per value', () => {
    const plan = planQuery(all, { tenant: { $in: ['b', 'a', 'b'] } }, [['_id', 1]]);
    assert.equal(plan.index.name, 'tenant_id');
    assert.equal(plan.ranges.length, 2);
    assert.equal(plan.sortServed, true);
  });

  it('prefers a served sort to an equally bound unsorted plan, and the primary key on a tie', () => {
    assert.equal(planQuery([primary, tenantDate], { tenant: 't', _id: { $gt: 5 } }, [['_id', 1]]).index.name, '_id_');
    assert.equal(planQuery(all, {}, []).index.name, '_id_');
    const byAmount = planQuery(all, { status: 'open' }, [['amount', 1]]);
    assert.deepEqual([byAmount.index.name, byAmount.sortServed, byAmount.reverse], ['amount_desc', true, true]);
  });

  it('falls back to a full scan with an in-memory sort when nothing fits', () => {
    const plan = planQuery(all, { qty: { $gt: 3 } }, [['qty', 1]]);
    assert.equal(plan.index.name, '_id_');
    assert.deepEqual([plan.boundFields, plan.sortServed, plan.covered], [0, false, false]);
  });

  it('seeks the hull of a keyset $or on a compound index', () => {
    const filter = { tenant: 't', $or: [{ sell_date: { $gt: '2024-03-01' } }, { sell_date: '2024-03-01', _id: { $gt: 77 } }] };
    const plan = planQuery(all, filter, [
      ['sell_date', 1],
      ['_id', 1],
    ]);
    assert.equal(plan.index.name, 'tenant_date');
    assert.equal(plan.sortServed, true);
    assert.equal(plan.boundFields, 2);
    const start = entryKey(tenantDate, { tenant: 't', sell_date: '2024-03-01', _id: 77 });
    assert.ok(Buffer.compare(plan.ranges[0]!.start, start) > 0, 'the scan starts after the last key of the previous page');
    assert.ok(!inRanges(plan, start));
    assert.ok(inRanges(plan, entryKey(tenantDate, { tenant: 't', sell_date: '2024-03-01', _id: 78 })));
  });

  it('returns no range when equality and $in contradict', () => {
    const plan = planQuery(all, { tenant: 't', $and: [{ tenant: { $in: ['u'] } }] }, []);
    assert.equal(plan.ranges.length, 0);
  });

  describe('agrees with the mingo filter on random data: ranges hold every match, covered plans nothing else, served sorts come out sorted', () => {
    const values: unknown[] = [undefined, null, -2, 0, 1.5, 3, 10, '', 'a', 'b', 'ba', true, false];
    const scalars = values.filter((value) => value !== undefined);
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const documents = Array.from({ length: 300 }, (_, i) => {
      const document: Record<string, unknown> = { _id: i % 7 === 0 ? `s${i}` : i };
      for (const field of ['tenant', 'sell_date', 'amount']) {
        const value = pick(values);
        if (value !== undefined) document[field] = value;
      }
      return document;
    });
    const condition = (): unknown => {
      const kind = pick(['eq', 'in', 'gt', 'gte', 'lt', 'lte', 'between', 'ne']);
      if (kind === 'eq') return pick(scalars);
      if (kind === 'in') return { $in: [pick(scalars), pick(scalars)] };
      if (kind === 'between') return { $gte: pick(scalars), $lt: pick(scalars) };
      if (kind === 'ne') return { $ne: pick(scalars) };
      return { [`$${kind}`]: pick(scalars) };
    };
    const sorts: Sort[] = [
      [],
      [['_id', 1]],
      [
        ['sell_date', 1],
        ['_id', 1],
      ],
      [
        ['sell_date', -1],
        ['_id', -1],
      ],
      [['amount', 1]],
      [['amount', -1]],
    ];

    it('for 500 random filters and sorts', () => {
      for (let round = 0; round < 500; round++) {
        const filter: Filter = {};
        for (const field of ['tenant', 'sell_date', '_id', 'amount']) if (random() < 0.5) filter[field] = condition();
        if (random() < 0.2) {
          const date = pick(scalars);
          filter['$or'] = [{ sell_date: { $gt: date } }, { sell_date: date, _id: { $gt: Math.floor(random() * 300) } }];
        }
        const sort = pick(sorts);
        const label = `${JSON.stringify(filter)} sorted ${JSON.stringify(sort)}`;
        const plan = planQuery(all, filter, sort);
        const matches = compileFilter(filter);
        const keyed = documents.map((document) => ({ document, key: entryKey(plan.index, document) }));
        for (const { document, key } of keyed) {
          const matched = matches(document as Doc);
          if (matched) assert.ok(inRanges(plan, key), `${label}: match ${JSON.stringify(document)} outside ${plan.index.name} ranges`);
          if (plan.covered) assert.equal(inRanges(plan, key), matched, `${label}: covered plan disagrees on ${JSON.stringify(document)}`);
        }
        if (!plan.sortServed || sort.length === 0 || plan.ranges.length > 1) continue;
        const scanned = keyed
          .filter(({ document, key }) => inRanges(plan, key) && matches(document as Doc))
          .sort((a, b) => Buffer.compare(a.key, b.key) * (plan.reverse ? -1 : 1));
        for (let i = 1; i < scanned.length; i++) {
          const previous = sort.map(([path, direction]) => sortComponent(scanned[i - 1]!.document, [path], direction));
          const current = sort.map(([path, direction]) => sortComponent(scanned[i]!.document, [path], direction));
          const order = sort.reduce((found, [, direction], k) => found || Buffer.compare(previous[k]!, current[k]!) * direction, 0);
          assert.ok(order <= 0, `${label}: out of order at ${i} on ${plan.index.name}`);
        }
      }
    });
  });
});
