import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@supply/kit';
import { createCustomerGroups } from '../customer-groups/service';
import { openReferenceDb, type ReferenceDb } from '../db';
import { createHierarchyLevels } from '../hierarchy-levels/service';
import { createItems } from '../items/service';
import { createUoms } from '../uoms/service';
import { lookupIds, resolveNamed, resolveNames, resolveUomNames } from './service';

const none = { items: [], customer_groups: [], sale_types: [], timing_intervals: [], uoms: [], locations: [] };

describe('reference name resolution', () => {
  let dir: string;
  let store: Store;
  let db: ReferenceDb;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reference-names-'));
    store = await openStore({ database: 'reference', dataDir: dir });
    db = await openReferenceDb(store);
    for (const tenant of ['north', 'south']) {
      await createUoms(db, tenant, {
        array_body: true,
        records: [
          { name: 'Each', abbreviation: 'ea' },
          { name: 'Case', abbreviation: 'cs' },
          // Another uom abbreviated like the first one's name: the name must win.
          { name: 'Crate', abbreviation: 'each' },
        ],
      });
      await createHierarchyLevels(db, tenant, {
        array_body: true,
        records: [
          { kind: 'item', name: 'Category' },
          { kind: 'item', name: 'Brand' },
          { kind: 'customer_group', name: 'Channel' },
        ],
      });
    }
    await createItems(db, 'north', {
      array_body: true,
      records: [
        { name: 'Apple', uom: 'ea', hierarchy: { values: { Brand: 'Orchard' } } },
        { name: 'Pear', uom: 'Case', hierarchy: { values: { category: 'Fruit', brand: 'Orchard' } } },
      ],
    });
    await createItems(db, 'south', { array_body: false, records: [{ name: 'Mango', uom: 'ea' }] });
    await createCustomerGroups(db, 'north', {
      array_body: false,
      records: [{ name: 'Retail', hierarchy: { values: { Channel: 'Stores' } } }],
    });
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers ids parallel to the names asked, ignoring case, 0 for unknown ones', async () => {
    const res = await resolveNamed(db.items, 'north', ['apple', 'PEAR', 'Kiwi', 'Apple', 'kiwi', '']);
    const [apple, pear] = res.ids;
    assert.ok(apple! > 0 && pear! > 0 && apple !== pear);
    assert.deepEqual(res.ids, [apple, pear, 0, apple, 0, 0]);
    assert.deepEqual(res.unknown, ['Kiwi', 'kiwi', ''], 'distinct as asked, first-seen order');
  });

  it("never resolves another tenant's names", async () => {
    const res = await resolveNamed(db.items, 'north', ['Mango']);
    assert.deepEqual(res, { ids: [0], unknown: ['Mango'] });
    const south = await resolveNamed(db.items, 'south', ['mango', 'Apple']);
    assert.ok(south.ids[0]! > 0);
    assert.deepEqual(south.unknown, ['Apple']);
  });

  it('resolves units of measure by name or abbreviation, a name winning over an abbreviation', async () => {
    const all = await resolveUomNames(db, 'north', ['Each', 'EA', 'cs', 'case', 'crate', 'box']);
    const [each, eachByAbbreviation, cs, caseByName, crate] = all.ids;
    assert.equal(each, eachByAbbreviation);
    assert.equal(cs, caseByName);
    assert.ok(crate! > 0);
    assert.notEqual(each, crate, "Each is a name here, not Crate's abbreviation");
    assert.deepEqual(all.unknown, ['box']);
  });

  it('resolves every kind in one call and refuses more than 10,000 names', async () => {
    const res = await resolveNames(db, 'north', { ...none, items: ['Pear'], uoms: ['kg', 'ea'] });
    assert.equal(res.items!.ids.length, 1);
    assert.deepEqual(res.uoms!.unknown, ['kg']);
    assert.deepEqual(res.sale_types, { ids: [], unknown: [] });
    const tooMany = Array.from({ length: 5_001 }, (_, i) => `n${i}`);
    await assert.rejects(
      resolveNames(db, 'north', { ...none, items: tooMany, locations: tooMany }),
      (err: any) => err.code === 'invalid_argument',
    );
  });

  it('looks names and hierarchy values up by id, leaving out unknown and foreign ids', async () => {
    const [apple, pear] = (await resolveNamed(db.items, 'north', ['Apple', 'Pear'])).ids;
    const [mango] = (await resolveNamed(db.items, 'south', ['Mango'])).ids;
    const [retail] = (await resolveNamed(db.customerGroups, 'north', ['Retail'])).ids;
    const [ea] = (await resolveUomNames(db, 'north', ['ea'])).ids;
    const res = await lookupIds(db, 'north', {
      item_ids: [pear!, apple!, mango!, 424242],
      customer_group_ids: [retail!],
      sale_type_ids: [],
      timing_interval_ids: [],
      uom_ids: [ea!],
      location_ids: [],
      include_hierarchy: true,
    });
    assert.deepEqual(res.item_levels, ['Category', 'Brand']);
    assert.deepEqual(res.customer_group_levels, ['Channel']);
    assert.deepEqual(
      res.items.map((i) => [i.name, i.hierarchy]),
      [
        ['Apple', ['', 'Orchard']],
        ['Pear', ['Fruit', 'Orchard']],
      ],
    );
    assert.deepEqual(
      res.customer_groups.map((g) => g.hierarchy),
      [['Stores']],
    );
    assert.deepEqual(
      res.uoms.map((u) => [u.name, u.abbreviation]),
      [['Each', 'ea']],
    );
  });
});
