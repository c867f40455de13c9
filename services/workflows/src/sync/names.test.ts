import assert from 'node:assert/strict';
import { LoadNameCache, LoadNames } from './names';
import { referenceTable, type ReferenceTable } from './reference-table';

const call = { context: { requestId: 'test', tenant: 'demo' } };

const TABLE: ReferenceTable = {
  items: [
    { id: 11, name: 'SKU-0001' },
    { id: 12, name: 'SKU-0002' },
  ],
  customer_groups: [{ id: 21, name: 'Retail' }],
  uoms: [{ id: 31, name: 'Each', abbreviation: 'ea' }],
  combinations: [{ id: 41, item_id: 11, customer_group_id: 21 }],
};

describe('load names', () => {
  it('resolves names ignoring case to ids and display names as the reference service stores them', async () => {
    const { clients } = referenceTable(TABLE);
    const names = new LoadNames(clients);
    await names.resolve({ items: ['sku-0001', 'SKU-0002'], uoms: ['EACH'] }, call);
    assert.equal(names.id('items', 'SKU-0001'), 11);
    assert.equal(names.id('items', 'Sku-0002'), 12);
    assert.equal(names.id('uoms', 'each'), 31);
    assert.deepEqual(names.record('uoms', 31), { id: 31, name: 'Each', abbreviation: 'ea' });
    assert.equal(names.record('items', names.id('items', 'sku-0001')).name, 'SKU-0001');
  });

  it('answers 0 for a name the reference service does not know, and has no display name for it', async () => {
    const { clients } = referenceTable(TABLE);
    const names = new LoadNames(clients);
    await names.resolve({ items: ['SKU-9999'], customer_groups: ['Retail'] }, call);
    assert.equal(names.id('items', 'SKU-9999'), 0);
    assert.equal(names.id('items', 'never asked'), 0);
    assert.throws(() => names.record('items', 0), /no display name for items 0/);
  });

  it('asks only about names it has not seen: a later chunk of the load repeating them costs no call', async () => {
    const { clients, calls } = referenceTable(TABLE);
    const names = new LoadNames(clients);
    await names.resolve({ items: ['SKU-0001', 'sku-0001'], customer_groups: ['Retail'] }, call);
    assert.deepEqual(
      calls.map((c) => c.method),
      ['resolveNames', 'lookupIds'],
    );
    assert.deepEqual((calls[0]!.request as { items: string[] }).items, ['SKU-0001'], 'a name repeated in other case is asked once');
    await names.resolve({ items: ['SKU-0001'], customer_groups: ['RETAIL'] }, call);
    assert.equal(calls.length, 2, 'nothing new: no call');
    await names.resolve({ items: ['SKU-0001', 'SKU-0002', 'SKU-9999'] }, call);
    assert.equal(calls.length, 4);
    assert.deepEqual((calls[2]!.request as { items: string[] }).items, ['SKU-0002', 'SKU-9999'], 'only the new names');
    assert.deepEqual((calls[3]!.request as { item_ids: number[] }).item_ids, [12], 'display names only for ids it has none for');
    await names.resolve({ items: ['SKU-9999'] }, call);
    assert.equal(calls.length, 4, 'an unknown name is remembered as unknown too');
  });

  it('chunks asking about the same names at once share one call', async () => {
    const { clients, calls, answering } = referenceTable(TABLE);
    let release!: () => void;
    answering.hold = new Promise((resolve) => (release = resolve));
    const names = new LoadNames(clients);
    const first = names.resolve({ items: ['SKU-0001'] }, call);
    const second = names.resolve({ items: ['sku-0001'], uoms: ['ea'] }, call);
    release();
    await Promise.all([first, second]);
    const asked = calls.filter((c) => c.method === 'resolveNames').map((c) => c.request as { items: string[]; uoms: string[] });
    assert.equal(asked.length, 2);
    assert.deepEqual(asked[0]!.items, ['SKU-0001']);
    assert.deepEqual(asked[1]!.items, [], 'the second waits for the first answer instead of asking again');
    assert.equal(names.id('items', 'SKU-0001'), 11);
  });

  it('a failed call leaves the names unresolved, so the next chunk asks again', async () => {
    const { clients, calls } = referenceTable(TABLE);
    const failing = { reference: { ...clients.reference, resolveNames: async () => Promise.reject(new Error('reference is down')) } };
    const names = new LoadNames(failing as unknown as typeof clients);
    await assert.rejects(names.resolve({ items: ['SKU-0001'] }, call), /reference is down/);
    (failing.reference as { resolveNames: unknown }).resolveNames = clients.reference.resolveNames;
    await names.resolve({ items: ['SKU-0001'] }, call);
    assert.equal(names.id('items', 'SKU-0001'), 11);
    assert.equal(calls.filter((c) => c.method === 'resolveNames').length, 1);
  });

  it('finds existing item-customer-group combinations, keeping missing ones unknown so another chunk may create them', async () => {
    const table = structuredClone(TABLE);
    const { clients, calls } = referenceTable(table);
    const names = new LoadNames(clients);
    const pairs = [
      { item_id: 11, customer_group_id: 21 },
      { item_id: 12, customer_group_id: 21 },
      { item_id: 11, customer_group_id: 21 },
    ];
    const comboOf = await names.combinations(pairs, call);
    assert.equal(comboOf(pairs[0]!), 41);
    assert.equal(comboOf(pairs[1]!), 0);
    assert.deepEqual((calls[0]!.request as { keys: unknown[] }).keys, pairs.slice(0, 2), 'each pair asked once');

    table.combinations!.push({ id: 42, item_id: 12, customer_group_id: 21 });
    const again = await names.combinations(pairs, call);
    assert.equal(again(pairs[1]!), 42, 'a combination missing before is asked about again');
    assert.deepEqual((calls[1]!.request as { keys: unknown[] }).keys, [pairs[1]], 'the found one is not');
  });
});

describe('load name cache', () => {
  it('gives a load the same names every time and forgets the load used longest ago beyond its capacity', () => {
    const { clients } = referenceTable(TABLE);
    const cache = new LoadNameCache(clients, 2);
    const a = cache.of('job:1');
    const b = cache.of('job:2');
    assert.equal(cache.of('job:1'), a);
    cache.of('job:3');
    assert.equal(cache.of('job:1'), a, 'job:1 was used more lately than job:2');
    assert.notEqual(cache.of('job:2'), b, 'job:2 was forgotten');
  });
});
