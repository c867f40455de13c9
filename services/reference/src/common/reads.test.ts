import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Collection, type Store } from '@supply/kit';
import { offsetPage } from './reads';
import type { TenantRecord } from './records';

describe('offset pages', () => {
  let dir: string;
  let store: Store;
  let records: Collection<TenantRecord>;
  let counts = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reads-'));
    store = await openStore({ dataDir: dir, database: 'reads' });
    records = await store.collection<TenantRecord>({ name: 'records', autoIncrement: true });
    const at = '2026-01-01T00:00:00.000000Z';
    await records.insertMany(Array.from({ length: 5 }, () => ({ tenant: 'a', created_at: at, updated_at: at })));
    await records.insertMany(Array.from({ length: 2 }, () => ({ tenant: 'b', created_at: at, updated_at: at })));
    const count = records.count.bind(records);
    records.count = (filter) => {
      counts++;
      return count(filter);
    };
  });

  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const page = async (n: number, perPage: number, tenant = 'a') => {
    counts = 0;
    const answer = await offsetPage(records, { tenant }, { page: n, per_page: perPage, total: 0 }, (rs) => rs.map((r) => r._id));
    return { ids: answer.records, total: answer.page.total, counted: counts > 0 };
  };

  it('tells the total from a page short of full, without counting', async () => {
    assert.deepEqual(await page(1, 25), { ids: [1, 2, 3, 4, 5], total: 5, counted: false });
    assert.deepEqual(await page(3, 2), { ids: [5], total: 5, counted: false });
    assert.deepEqual(await page(1, 25, 'b'), { ids: [6, 7], total: 2, counted: false });
    assert.deepEqual(await page(1, 25, 'nobody'), { ids: [], total: 0, counted: false });
  });

  it('counts for a full page and for an empty page past the end', async () => {
    assert.deepEqual(await page(1, 2), { ids: [1, 2], total: 5, counted: true });
    assert.deepEqual(await page(1, 5), { ids: [1, 2, 3, 4, 5], total: 5, counted: true });
    assert.deepEqual(await page(9, 2), { ids: [], total: 5, counted: true });
  });
});
