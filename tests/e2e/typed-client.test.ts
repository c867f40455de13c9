import assert from 'node:assert/strict';
import { createSupplyClient, type Schema, type SupplyClient } from '@supply/client';
import { startSystem, type TestSystem } from '../support/system';
import { FINISHED } from './workflows-support';

const tenant = 'demo';
const salesRow = (sell_date: string, quantity: number): Schema<'SalesSyncRow'> => ({
  sale_type_name: 'History',
  item_name: 'SKU-0001',
  customer_group_name: 'Retail',
  sell_date,
  timing_interval: 'day',
  quantity,
  uom: 'ea',
});

describe('the typed client against the current API', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let api: SupplyClient;

  before(async () => {
    sys = await startSystem();
    api = createSupplyClient({ baseUrl: sys.baseUrl, token: await sys.tokenFor(tenant, 'planner@demo.test') });
  });
  after(() => sys?.stop());

  it('lists items with offset pagination and a deepObject filter, and reads one by id', async () => {
    const page = await api.GET('/{tenant}/api/v1/items', { params: { path: { tenant }, query: { per_page: 2, page: 1 } } });
    assert.equal(page.response.status, 200);
    assert.equal(page.data!.data.length, 2);
    const { total, last_page } = page.data!.meta.pagination;
    assert.ok(total >= 2 && last_page >= 1);

    const name = page.data!.data[0]!.name;
    const filtered = await api.GET('/{tenant}/api/v1/items', { params: { path: { tenant }, query: { filter: { name } } } });
    assert.deepEqual(
      filtered.data!.data.map((i) => i.name),
      [name],
    );

    const one = await api.GET('/{tenant}/api/v1/items/{id}', { params: { path: { tenant, id: String(page.data!.data[0]!.id) } } });
    assert.equal(one.data!.data[0]!.name, name);
    assert.ok(one.response.headers.get('Credits-Remaining'));
  });

  it('creates a unit of measure, then answers its 422 and 404 in the documented shapes', async () => {
    const created = await api.POST('/{tenant}/api/v1/uoms', {
      params: { path: { tenant } },
      body: { name: 'Typed pallet', abbreviation: 'tpl' },
    });
    assert.equal(created.response.status, 201);
    const uom: Schema<'Uom'> = created.data!.data[0]!;
    assert.equal(uom.abbreviation, 'tpl');

    const invalid = await api.POST('/{tenant}/api/v1/uoms', { params: { path: { tenant } }, body: { name: '', abbreviation: 'x' } });
    assert.equal(invalid.response.status, 422);
    assert.ok(invalid.error && 'errors' in invalid.error && invalid.error.errors.name);

    const missing = await api.GET('/{tenant}/api/v1/uoms/{id}', { params: { path: { tenant, id: '999999' } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error && 'type' in missing.error ? missing.error.type : null, '/problems/not-found');
  });

  it('syncs sales rows: 202 with the job, followed to its end', async () => {
    const accepted = await api.POST('/{tenant}/api/v1/workflows/sync-sales', {
      params: { path: { tenant }, header: { 'Idempotency-Key': `typed-client-${Date.now()}` } },
      body: { data: [salesRow('2036-03-01', 4), salesRow('2036-03-02', 5)] },
    });
    assert.equal(accepted.response.status, 202);
    const job = accepted.data!.data[0] as Schema<'Job'>;
    assert.equal(accepted.response.headers.get('Location'), `/${tenant}/api/v1/jobs/${job.job_id}`);
    let status = job.status;
    for (let i = 0; i < 100 && !FINISHED.includes(status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const read = await api.GET('/{tenant}/api/v1/jobs/{job_id}', { params: { path: { tenant, job_id: String(job.job_id) } } });
      status = read.data!.data[0]!.status;
    }
    assert.equal(status, 'succeeded');
  });

  it('reads credits and a cursor page of sales', async () => {
    const credits = await api.GET('/{tenant}/api/v1/credits', { params: { path: { tenant } } });
    assert.ok(credits.data!.data[0]!.allowance > 0);
    const sales = await api.GET('/{tenant}/api/v1/sales-data', {
      params: { path: { tenant }, query: { per_page: 3, sort: '-sell_date' } },
    });
    assert.equal(sales.data!.data.length, 3);
    assert.equal(typeof sales.data!.meta.pagination.has_more, 'boolean');
  });
});
