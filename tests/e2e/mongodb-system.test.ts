// The system on the MongoDB-protocol backend (CI: FerretDB): all-in-one in `npm test`, every
// target its own process in the distributed pass (E2E_SYSTEM=distributed). A new tenant, its
// reference data, an inventory sync through workflows into transactional, read back; each
// service in its own database `<MONGODB_DATABASE_PREFIX>_<service>`.
//
// Without the demo seed: FerretDB's SQLite handler takes the demo's ~30,000 weekly sales rows
// at some 50 upserts a second (each scans), minutes per system start. That is also why the other
// E2E files of the distributed pass run on the embedded store (.ci/run).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { SERVICE_NAMES } from '@supply/kit';
import { missingBackend } from '../support/require';
import { api, DISTRIBUTED, dropMongoDatabases, startSystem, type TestSystem } from '../support/system';
import { busEnv, dropBusNamespace, postFile, waitForJob } from './workflows-support';

const MONGODB_URL = process.env.MONGODB_URL;

describe(`the system on MongoDB (${DISTRIBUTED ? 'every target its own process' : 'all-in-one'})`, function () {
  this.timeout(180_000);
  if (!MONGODB_URL) {
    missingBackend('MONGODB', 'MONGODB_URL is not set');
    return;
  }
  const prefix = `sys_${randomBytes(4).toString('hex')}`;
  // With RabbitMQ when there is one (as deployed); the distributed system needs it anyway.
  const bus = busEnv();
  let sys: TestSystem | undefined;
  const slug = `mongo-${randomBytes(3).toString('hex')}`;
  const email = `admin@${slug}.test`;
  let token = '';

  before(async () => {
    // The distributed system takes MONGODB_URL from this environment, as its processes would from theirs.
    const backends = DISTRIBUTED ? bus : { ...bus, MONGODB_URL };
    sys = await startSystem({ env: { ...backends, MONGODB_DATABASE_PREFIX: prefix, SEED_DEMO: '0' } });
    await sys.clients.tokens.createTenant({ slug, name: '', public_api_enabled: true });
    await sys.clients.tokens.createUser(
      { email, password: 'mongodb-password-1', is_admin: true, levels: {} },
      { context: { requestId: 'test', tenant: slug } },
    );
    token = await sys.tokenFor(slug, email);
  });
  after(async () => {
    await sys?.stop();
    await dropBusNamespace(bus);
    await dropMongoDatabases(MONGODB_URL, prefix);
  });

  it('is ready, and every service keeps its data in its own database', async () => {
    const ready = await api(sys!, '/readyz');
    assert.equal(ready.status, 200, ready.text);
    if (ready.body.services) assert.ok(Object.values(ready.body.services).every(Boolean), ready.text);
    const client = new MongoClient(MONGODB_URL);
    try {
      const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
      const ours = databases
        .map((d) => d.name)
        .filter((n) => n.startsWith(`${prefix}_`))
        .map((n) => n.slice(prefix.length + 1));
      for (const service of SERVICE_NAMES) assert.ok(ours.includes(service), `${prefix}_${service} in ${ours.join(', ')}`);
      const tenants = await client.db(`${prefix}_tokens`).listCollections().toArray();
      assert.ok(tenants.length > 0, 'the tokens service wrote its collections');
    } finally {
      await client.close();
    }
  });

  it('takes reference writes, an inventory sync through workflows into transactional, and reads them back', async () => {
    const post = (path: string, body: unknown) => api(sys!, `/${slug}/api/v1/${path}`, { method: 'POST', token, body });
    const created = [
      await post('uoms', { name: 'Each', abbreviation: 'ea' }),
      await post('items', { name: 'MONGO-1', uom: 'ea', unit_cost: 2, unit_price: 5 }),
      await post('locations', { name: 'DC-Mongo', type: 'distribution_center' }),
    ];
    for (const res of created) assert.equal(res.status, 201, res.text);
    const items = await api(sys!, `/${slug}/api/v1/items`, { token });
    assert.equal(items.status, 200, items.text);
    assert.deepEqual(
      items.body.data.map((i: { name: string }) => i.name),
      ['MONGO-1'],
    );

    const sync = await api(sys!, `/${slug}/api/v1/workflows/sync-inventory`, {
      method: 'POST',
      token,
      body: { data: [{ item_name: 'MONGO-1', location_name: 'DC-Mongo', inventory_date: '2025-01-12', quantity: 140, uom: 'ea' }] },
    });
    assert.equal(sync.status, 202, sync.text);
    const job = await waitForJob(sys!, slug, token, sync.body.data[0].job_id, 120_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const inventory = await api(sys!, `/${slug}/api/v1/inventory`, { token });
    assert.equal(inventory.status, 200, inventory.text);
    assert.deepEqual(
      inventory.body.data.map((r: { item_name: string; location_name: string; quantity: number }) => [
        r.item_name,
        r.location_name,
        r.quantity,
      ]),
      [['MONGO-1', 'DC-Mongo', 140]],
    );
  });

  it('takes a file import (its records stage as arrays of cells), updating the row the sync made and adding one', async () => {
    const csv =
      'item_name,location_name,inventory_date,quantity,uom\nMONGO-1,DC-Mongo,2025-01-12,150,ea\nMONGO-1,DC-Mongo,2025-01-19,90,ea\n';
    const res = await postFile(sys!, `/${slug}/api/v1/workflows/sync-inventory/import`, { token, file: csv });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(sys!, slug, token, res.body.data[0].job_id, 120_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual([job.result.created, job.result.updated], [1, 1]);
    const inventory = await api(sys!, `/${slug}/api/v1/inventory?sort=inventory_date`, { token });
    assert.equal(inventory.status, 200, inventory.text);
    assert.deepEqual(
      inventory.body.data.map((r: { inventory_date: string; quantity: number }) => [r.inventory_date, r.quantity]),
      [
        ['2025-01-12', 150],
        ['2025-01-19', 90],
      ],
    );
  });
});
