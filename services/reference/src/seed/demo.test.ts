import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '@supply/kit';
import { openReferenceDb, type ReferenceDb } from '../db';
import { DEMO_ITEM_COUNT, seedDemoReference } from './demo';

describe('demo reference data', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  async function fresh(): Promise<{ store: Store; db: ReferenceDb }> {
    const dir = mkdtempSync(join(tmpdir(), 'reference-seed-'));
    dirs.push(dir);
    const store = await openStore({ database: 'reference', dataDir: dir });
    stores.push(store);
    return { store, db: await openReferenceDb(store) };
  }
  after(async () => {
    for (const s of stores) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Everything a test could rely on, without ids and timestamps. */
  const snapshot = async (db: ReferenceDb, tenant: string) => {
    const items = await db.items.find({ tenant }, { sort: [['_id', 1]] });
    const itemLocations = await db.itemLocations.find({ tenant }, { sort: [['_id', 1]] });
    return {
      items: items.map(({ name, description, unit_cost, unit_price }) => ({ name, description, unit_cost, unit_price })),
      itemLocations: itemLocations.map(({ _id, tenant: _t, item_id: _i, location_id: _l, created_at: _c, updated_at: _u, ...p }) => p),
    };
  };

  it('is the same on every fresh store, and a second start adds nothing', async () => {
    const a = await fresh();
    const b = await fresh();
    assert.deepEqual(await seedDemoReference(a.store, a.db), ['demo', 'acme']);
    await seedDemoReference(b.store, b.db);
    assert.deepEqual(await snapshot(a.db, 'demo'), await snapshot(b.db, 'demo'));
    assert.equal((await snapshot(a.db, 'demo')).items.length, DEMO_ITEM_COUNT);

    const before = await a.db.items.count({});
    assert.deepEqual(await seedDemoReference(a.store, a.db), []);
    assert.equal(await a.db.items.count({}), before);
  });

  it('does not recreate a demo record a user renamed', async () => {
    const { store, db } = await fresh();
    await seedDemoReference(store, db);
    await db.items.updateOne({ tenant: 'demo', name_lower: 'sku-0001' }, { $set: { name: 'Renamed', name_lower: 'renamed' } });
    await seedDemoReference(store, db);
    assert.equal(await db.items.count({ tenant: 'demo', name_lower: 'sku-0001' }), 0);
  });
});
