import assert from 'node:assert/strict';
import { createSupplyClient, type Schema } from '@supply/client';
import { api, startSystem, type TestSystem } from '../support/system';
import { busEnv, days, dropBusNamespace, inventoryRecords, salesRecords, salesRow, waitForJob } from './workflows-support';

const SALES = '/demo/api/v1/workflows/sync-sales';
const call = { context: { requestId: 'test', tenant: 'demo' } };

type SalesRow = Schema<'SalesSyncRow'>;
type InventoryRow = Schema<'InventorySyncRow'>;
type SalesSync = Schema<'PostWorkflowsSyncSalesRequest'>;
/** A History day row of SKU-0001 x Retail, as the typed client sends it. */
const sale = (date: string, quantity: number, overrides: Partial<SalesRow> = {}): SalesRow =>
  ({ ...salesRow(date, quantity), ...overrides }) as SalesRow;

describe('workflows: sales and inventory sync (JSON)', function () {
  this.timeout(60_000);
  const bus = busEnv();
  let sys: TestSystem;
  let token: string;
  let secondToken: string;
  let workflowOnly: string;
  let adminToken: string;

  /** Raw POSTs, for what the typed client would not send (malformed bodies, legacy routes). */
  const post = (path: string, body: unknown, opts: { token?: string; headers?: Record<string, string> } = {}) =>
    api(sys, path, { method: 'POST', token: opts.token ?? token, body, headers: opts.headers });

  const client = (bearer: string | undefined = token) => createSupplyClient({ baseUrl: sys.baseUrl, token: bearer });
  /** The typed client's answer with `body` (the data or the error) and `text` for messages, as the raw helper has them. */
  const answered = <T extends { response: Response; data?: unknown; error?: unknown }>(r: T) => ({
    ...r,
    status: r.response.status,
    headers: r.response.headers,
    body: (r.data ?? r.error) as any,
    text: JSON.stringify(r.data ?? r.error),
  });
  type Sync = { token?: string; key?: string; tenant?: string };
  const idempotency = (key?: string) => (key === undefined ? {} : { 'Idempotency-Key': key });
  /** POST /workflows/sync-sales through the typed client. */
  const syncSales = async (body: SalesSync, opts: Sync = {}) =>
    answered(
      await client(opts.token).POST('/{tenant}/api/v1/workflows/sync-sales', {
        params: { path: { tenant: opts.tenant ?? 'demo' }, header: idempotency(opts.key) },
        body,
      }),
    );
  /** POST /workflows/sync-inventory through the typed client. */
  const syncInventory = async (body: Schema<'PostWorkflowsSyncInventoryRequest'>, opts: Sync = {}) =>
    answered(
      await client(opts.token).POST('/{tenant}/api/v1/workflows/sync-inventory', {
        params: { path: { tenant: opts.tenant ?? 'demo' }, header: idempotency(opts.key) },
        body,
      }),
    );

  /** Posts a sync and waits for its job. */
  async function run(sync: typeof syncSales | typeof syncInventory, body: Parameters<typeof sync>[0]) {
    const res = await (sync as (b: typeof body) => ReturnType<typeof syncSales>)(body);
    assert.equal(res.status, 202, res.text);
    return waitForJob(sys, 'demo', token, res.body.data[0].job_id);
  }

  before(async () => {
    sys = await startSystem({ env: bus });
    // These tests send more requests a minute than the default rate limit lets one token make.
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    secondToken = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.read']);
    workflowOnly = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.workflow']);
    adminToken = await sys.tokenFor('demo', 'admin@demo.test', ['*']);
    // Items with no customer group combination yet, and customer groups only these tests load.
    await sys.clients.reference.createItems(
      {
        array_body: true,
        records: ['WF-ITEM-1', 'WF-ITEM-2', 'WF-ITEM-3'].map((name) => ({ name, uom: 'ea', unit_cost: 1, unit_price: 2 })),
      },
      call,
    );
    await sys.clients.reference.createCustomerGroups(
      { array_body: true, records: ['WF-Group-A', 'WF-Group-B', 'WF-Group-C'].map((name) => ({ name })) },
      call,
    );
  });
  after(async () => {
    await sys?.stop();
    await dropBusNamespace(bus);
  });

  describe('upsert', () => {
    it('answers 202 with the queued job, creates, then on a match changes only quantity and uom', async () => {
      const dates = days('2031-01-01', 3);
      const res = await syncSales({ mode: 'upsert', data: dates.map((d, i) => sale(d, i + 1)) });
      assert.equal(res.status, 202, res.text);
      const accepted = res.body.data[0];
      assert.equal(typeof accepted.job_id, 'number');
      assert.equal(accepted.status, 'queued');
      assert.deepEqual(accepted.progress, { processed: 0, total: 3 });
      assert.equal(res.headers.get('location'), `/demo/api/v1/jobs/${accepted.job_id}`);
      assert.deepEqual(res.body.meta, {});
      assert.equal(res.body.links, '/demo/api/v1/workflows/sync-sales');

      const job = await waitForJob(sys, 'demo', token, accepted.job_id);
      assert.equal(job.status, 'succeeded');
      assert.deepEqual(job.result, { created: 3, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      assert.deepEqual(job.progress, { processed: 3, total: 3 });
      assert.deepEqual(job.errors, []);
      assert.equal(job.errors_count, 0);
      for (const field of ['created_at', 'updated_at', 'started_at', 'finished_at'])
        assert.match(job[field], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      const before = await salesRecords(sys.clients, 'demo', {
        item_names: ['SKU-0001'],
        customer_group_names: ['Retail'],
        sell_date_from: dates[0],
        sell_date_to: dates[2],
      });
      assert.deepEqual(
        before.map((r) => [r.sell_date, r.quantity, r.uom_abbr]),
        dates.map((d, i) => [d, i + 1, 'ea']),
      );

      // Same key (names in another case): row 0 as it is, row 1 a new quantity, row 2 another uom.
      const again = await run(syncSales, {
        data: [
          sale(dates[0]!, 1),
          sale(dates[1]!, 20, { item_name: 'sku-0001' }),
          sale(dates[2]!, 3, { uom: 'Case', customer_group_name: 'RETAIL' }),
        ],
      });
      assert.equal(again.status, 'succeeded');
      assert.deepEqual(again.result, { created: 0, updated: 2, deleted: 0, unchanged: 1, failed: 0 });
      const after = await salesRecords(sys.clients, 'demo', {
        item_names: ['SKU-0001'],
        customer_group_names: ['Retail'],
        sell_date_from: dates[0],
        sell_date_to: dates[2],
      });
      assert.deepEqual(
        after.map((r) => [r.id, r.sell_date, r.quantity, r.uom_abbr, r.created_at, r.item_name]),
        [
          [before[0]!.id, dates[0], 1, 'ea', before[0]!.created_at, 'SKU-0001'],
          [before[1]!.id, dates[1], 20, 'ea', before[1]!.created_at, 'SKU-0001'],
          [before[2]!.id, dates[2], 3, 'cs', before[2]!.created_at, 'SKU-0001'],
        ],
      );
      assert.equal(after[0]!.updated_at, before[0]!.updated_at, 'an unchanged match is not rewritten');
    });

    it('checks every row on its own and reports each problem by row and field; continue_on_error loads the valid rows', async () => {
      const d = days('2031-02-01', 12);
      const rows = [
        sale(d[0]!, 5),
        sale(d[1]!, 1, { sale_type_name: 'Budget' }),
        sale(d[2]!, 1, { item_name: 'NO-SUCH-ITEM' }),
        sale(d[3]!, 1, { customer_group_name: 'Nobody' }),
        sale(d[4]!, 1, { uom: 'gallon' }),
        sale(d[5]!, 1, { timing_interval: 'fortnight' as SalesRow['timing_interval'] }),
        sale('2031-02-30', 1),
        sale(d[7]!, -1),
        { ...sale(d[8]!, 1), quantity: undefined } as unknown as SalesRow,
        sale(d[9]!, 'lots' as unknown as number),
        sale(d[10]!, 0),
        sale(d[11]!, 2.75),
      ];
      const job = await run(syncSales, { options: { continue_on_error: true }, data: rows });
      assert.equal(job.status, 'partially_succeeded');
      assert.deepEqual(job.result, { created: 3, updated: 0, deleted: 0, unchanged: 0, failed: 9 });
      assert.deepEqual(job.progress, { processed: 12, total: 12 });
      assert.equal(job.errors_count, 9);
      assert.deepEqual(
        job.errors.map((e: { row: number; field: string }) => [e.row, e.field]),
        [
          [1, 'data.1.sale_type_name'],
          [2, 'data.2.item_name'],
          [3, 'data.3.customer_group_name'],
          [4, 'data.4.uom'],
          [5, 'data.5.timing_interval'],
          [6, 'data.6.sell_date'],
          [7, 'data.7.quantity'],
          [8, 'data.8.quantity'],
          [9, 'data.9.quantity'],
        ],
      );
      const messages = Object.fromEntries(job.errors.map((e: { field: string; message: string }) => [e.field, e.message]));
      assert.equal(messages['data.1.sale_type_name'], 'The selected data.1.sale_type_name is invalid.');
      assert.equal(messages['data.6.sell_date'], 'The data.6.sell_date field must be a valid date (YYYY-MM-DD).');
      assert.equal(messages['data.7.quantity'], 'The data.7.quantity field must be at least 0.');
      assert.equal(messages['data.8.quantity'], 'The data.8.quantity field is required.');
      assert.equal(messages['data.9.quantity'], 'The data.9.quantity field must be a number.');
      const stored = await salesRecords(sys.clients, 'demo', {
        item_names: ['SKU-0001'],
        customer_group_names: ['Retail'],
        sell_date_from: d[0],
        sell_date_to: d[11],
      });
      assert.deepEqual(
        stored.map((r) => [r.sell_date, r.quantity]),
        [
          [d[0], 5],
          [d[10], 0],
          [d[11], 2.75],
        ],
      );
    });

    it('continue_on_error false (the default): one invalid row and nothing at all is loaded', async () => {
      const d = days('2031-03-01', 5);
      const job = await run(syncSales, { data: [...d.slice(0, 4).map((x) => sale(x, 1)), sale(d[4]!, -3)] });
      assert.equal(job.status, 'failed');
      assert.deepEqual(job.result, { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 1 });
      assert.deepEqual(
        job.errors.map((e: { field: string }) => e.field),
        ['data.4.quantity'],
      );
      assert.match(job.message, /nothing was loaded/);
      assert.deepEqual(await salesRecords(sys.clients, 'demo', { item_names: ['SKU-0001'], sell_date_from: d[0], sell_date_to: d[4] }), []);

      const fixed = await run(syncSales, { options: { continue_on_error: false }, data: d.map((x) => sale(x, 1)) });
      assert.equal(fixed.status, 'succeeded');
      assert.equal(fixed.result.created, 5);
    });

    it('allow_record_creation false refuses a missing item-customer-group combination; true creates it', async () => {
      const [date] = days('2031-04-01', 1);
      const refused = await run(syncSales, {
        options: { allow_record_creation: false, continue_on_error: true },
        data: [sale(date!, 4, { item_name: 'WF-ITEM-1' }), sale(date!, 4)],
      });
      assert.equal(refused.status, 'partially_succeeded');
      assert.deepEqual(
        refused.errors.map((e: { field: string }) => e.field),
        ['data.0.customer_group_name'],
      );
      assert.match(refused.errors[0].message, /WF-ITEM-1 has no combination with customer group Retail/);
      assert.equal(refused.result.created, 1);

      const created = await run(syncSales, {
        options: { allow_record_creation: true },
        data: [sale(date!, 4, { item_name: 'WF-ITEM-1' })],
      });
      assert.equal(created.status, 'succeeded');
      assert.equal(created.result.created, 1);
      const stored = await salesRecords(sys.clients, 'demo', { item_names: ['WF-ITEM-1'] });
      assert.deepEqual(
        stored.map((r) => [r.customer_group_name, r.sell_date, r.quantity]),
        [['Retail', date, 4]],
      );
    });

    it('allow_record_update false makes a match an error (same values or not); new rows still load', async () => {
      const d = days('2031-05-01', 3);
      await run(syncSales, { data: [sale(d[0]!, 1), sale(d[1]!, 1)] });
      const job = await run(syncSales, {
        options: { allow_record_update: false, continue_on_error: true },
        data: [sale(d[0]!, 1), sale(d[1]!, 9), sale(d[2]!, 1)],
      });
      assert.equal(job.status, 'partially_succeeded');
      assert.deepEqual(job.result, { created: 1, updated: 0, deleted: 0, unchanged: 0, failed: 2 });
      assert.deepEqual(
        job.errors.map((e: { field: string }) => e.field),
        ['data.0', 'data.1'],
      );
      assert.match(job.errors[1].message, /already exists, and allow_record_update is false/);
      const stored = await salesRecords(sys.clients, 'demo', {
        item_names: ['SKU-0001'],
        customer_group_names: ['Retail'],
        sell_date_from: d[0],
        sell_date_to: d[2],
      });
      assert.deepEqual(
        stored.map((r) => r.quantity),
        [1, 1, 1],
        'the match kept its quantity',
      );
    });

    it('a load that holds one key twice reports the later row', async () => {
      const [date] = days('2031-05-10', 1);
      const job = await run(syncSales, {
        options: { continue_on_error: true },
        data: [sale(date!, 1), sale(date!, 2, { item_name: 'sku-0001', timing_interval: 'DAY' as SalesRow['timing_interval'] })],
      });
      assert.deepEqual(job.result, { created: 1, updated: 0, deleted: 0, unchanged: 0, failed: 1 });
      assert.deepEqual(
        job.errors.map((e: { field: string }) => e.field),
        ['data.1'],
      );
      assert.match(job.errors[0].message, /same item, customer group, sale type, timing interval and sell date as row 0/);
    });

    it('refuses a malformed request with a 422 naming each field, and more than 10,000 rows', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'data'],
        [{ data: 'rows' }, 'data'],
        [{ data: [] }, 'data'],
        [{ mode: 'merge', data: [sale('2031-01-01', 1)] }, 'mode'],
        [{ options: { continue_on_error: 'maybe' }, data: [sale('2031-01-01', 1)] }, 'options.continue_on_error'],
        [{ options: 'yes', data: [sale('2031-01-01', 1)] }, 'options'],
        [{ scope: { location: 'DC-East' }, data: [sale('2031-01-01', 1)] }, 'scope.location'],
      ];
      for (const [body, field] of cases) {
        const res = await post(SALES, body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
        assert.ok(res.body.errors[field], `${field} in ${res.text}`);
        assert.match(res.body.message, /\.|error/);
      }
      const many = days('2040-01-01', 10_001).map((d) => sale(d, 1));
      const tooMany = await post(SALES, { data: many });
      assert.equal(tooMany.status, 422);
      assert.match(tooMany.body.errors.data[0], /not have more than 10000 items/);
      const notJson = await post(SALES, '{"data": [', { headers: { 'Content-Type': 'application/json' } });
      assert.equal(notJson.status, 400);
      assert.equal(notJson.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    });

    it('needs the workflow scope and Planner on the demand module', async () => {
      const readOnly = await syncSales({ data: [sale('2031-01-01', 1)] }, { token: secondToken });
      assert.equal(readOnly.status, 403);
      assert.equal(readOnly.body.type, '/problems/insufficient-scope');
      const noDemand = await sys.tokenFor('demo', 'nodemand@demo.test', ['*']);
      const noLevel = await syncSales({ data: [sale('2031-01-01', 1)] }, { token: noDemand });
      assert.equal(noLevel.status, 403);
      assert.equal(noLevel.body.type, '/problems/insufficient-permission');
    });
  });

  describe('replace', () => {
    const forecast = (item: string, group: string, date: string, q = 1) =>
      sale(date, q, { item_name: item, customer_group_name: group, sale_type_name: 'Forecast' });

    it('needs public_api.workflow.replace (403) and a scope (422)', async () => {
      const body: SalesSync = {
        mode: 'replace',
        scope: { sale_type: 'Forecast', customer_group: 'WF-Group-A' },
        data: [forecast('SKU-0001', 'WF-Group-A', '2032-01-01')],
      };
      const denied = await syncSales(body, { token: workflowOnly });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.type, '/problems/insufficient-scope');
      assert.match(denied.body.detail, /public_api\.workflow\.replace/);
      const noScope = await syncSales({ ...body, scope: undefined });
      assert.equal(noScope.status, 422);
      assert.match(noScope.body.errors.scope[0], /required when mode is replace/);
      const unknown = await syncSales({ ...body, scope: { customer_group: 'Nobody' } });
      assert.equal(unknown.status, 422);
      assert.deepEqual(Object.keys(unknown.body.errors), ['scope.customer_group']);
      // An upsert with the same token needs no replace scope.
      assert.equal((await syncSales({ ...body, mode: 'upsert', scope: undefined }, { token: workflowOnly })).status, 202);
    });

    it('deletes inside its scope what the load does not contain and leaves everything outside it', async () => {
      const d = days('2032-02-01', 3);
      const inside = d.flatMap((x) => ['SKU-0001', 'SKU-0002'].map((item) => forecast(item, 'WF-Group-A', x)));
      const otherGroup = d.map((x) => forecast('SKU-0001', 'WF-Group-B', x));
      const otherType = d.map((x) => sale(x, 1, { customer_group_name: 'WF-Group-A' }));
      assert.equal((await run(syncSales, { data: [...inside, ...otherGroup, ...otherType] })).status, 'succeeded');

      const scopeBefore = await salesRecords(sys.clients, 'demo', { sale_type_names: ['Forecast'], customer_group_names: ['WF-Group-A'] });
      const load = [
        forecast('SKU-0001', 'WF-Group-A', d[0]!, 7),
        forecast('SKU-0002', 'WF-Group-A', d[1]!, 1),
        forecast('SKU-0003', 'WF-Group-A', d[2]!, 1),
      ];
      const job = await run(syncSales, { mode: 'replace', scope: { sale_type: 'Forecast', customer_group: 'wf-group-a' }, data: load });
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      // Everything in the scope but the two records the load matched.
      assert.deepEqual(job.result, { created: 1, updated: 1, deleted: scopeBefore.length - 2, unchanged: 1, failed: 0 });

      const scopeNow = await salesRecords(sys.clients, 'demo', { sale_type_names: ['Forecast'], customer_group_names: ['WF-Group-A'] });
      assert.deepEqual(scopeNow.map((r) => [r.item_name, r.sell_date, r.quantity]).sort(), [
        ['SKU-0001', d[0], 7],
        ['SKU-0002', d[1], 1],
        ['SKU-0003', d[2], 1],
      ]);
      assert.equal(
        (await salesRecords(sys.clients, 'demo', { sale_type_names: ['Forecast'], customer_group_names: ['WF-Group-B'] })).length,
        3,
        'another group stays',
      );
      assert.equal(
        (await salesRecords(sys.clients, 'demo', { sale_type_names: ['History'], customer_group_names: ['WF-Group-A'] })).length,
        3,
        'another sale type stays',
      );
    });

    it('reports rows outside the scope and, when a row failed, deletes only what the loaded rows do not cover', async () => {
      const d = days('2032-03-01', 2);
      const job = await run(syncSales, {
        mode: 'replace',
        scope: { customer_group: 'WF-Group-C' },
        options: { continue_on_error: true },
        data: [forecast('SKU-0001', 'WF-Group-C', d[0]!), forecast('SKU-0001', 'WF-Group-B', d[1]!)],
      });
      assert.equal(job.status, 'partially_succeeded');
      assert.deepEqual(
        job.errors.map((e: { field: string }) => e.field),
        ['data.1.customer_group_name'],
      );
      assert.match(job.errors[0].message, /outside the replace scope/);
      assert.equal(job.result.created, 1);
    });

    it('a replace while another replace of an overlapping scope runs is 409; once it has finished, it runs', async () => {
      const items = Array.from({ length: 40 }, (_, i) => `SKU-${String(i + 1).padStart(4, '0')}`);
      const big = days('2033-01-01', 75).flatMap((x) => items.map((item) => forecast(item, 'WF-Group-B', x)));
      const earlier = await salesRecords(sys.clients, 'demo', { customer_group_names: ['WF-Group-B'] });
      const first = await syncSales({ mode: 'replace', scope: { customer_group: 'WF-Group-B' }, data: big });
      assert.equal(first.status, 202, first.text);
      const second: SalesSync = {
        mode: 'replace',
        scope: { customer_group: 'WF-Group-B', sale_type: 'Forecast' },
        data: [forecast('SKU-0001', 'WF-Group-B', '2033-01-01')],
      };
      const conflict = await syncSales(second);
      assert.equal(conflict.status, 409, conflict.text);
      assert.equal(conflict.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.match(
        conflict.body.detail,
        new RegExp(`replace sync of an overlapping scope is already running \\(job ${first.body.data[0].job_id}\\)`),
      );
      // Another scope is free meanwhile.
      assert.equal((await syncSales({ ...second, scope: { customer_group: 'WF-Group-C', sale_type: 'History' } })).status, 202);
      const done = await waitForJob(sys, 'demo', token, first.body.data[0].job_id);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.result.created, 3_000);
      assert.equal(done.result.deleted, earlier.length, 'what the group held before');
      const after = await syncSales(second);
      assert.equal(after.status, 202, after.text);
      const job = await waitForJob(sys, 'demo', token, after.body.data[0].job_id);
      assert.deepEqual(job.result, { created: 0, updated: 0, deleted: 2_999, unchanged: 1, failed: 0 });
    });
  });

  describe('dry run', () => {
    it('answers 200 with what would be created, updated, deleted and refused, and writes nothing', async () => {
      const d = days('2034-01-01', 4);
      await run(syncSales, {
        data: [
          sale(d[0]!, 1, { customer_group_name: 'WF-Group-C', sale_type_name: 'Forecast' }),
          sale(d[1]!, 1, { customer_group_name: 'WF-Group-C', sale_type_name: 'Forecast' }),
          sale(d[2]!, 1, { customer_group_name: 'WF-Group-C', sale_type_name: 'Forecast' }),
        ],
      });
      const snapshot = () => salesRecords(sys.clients, 'demo', { customer_group_names: ['WF-Group-C'], sale_type_names: ['Forecast'] });
      const combos = () => sys.clients.reference.getItemCustomerGroups({ ids: [], keys: [] }, call);
      const before = await snapshot();
      const combosBefore = (await combos()).records.length;
      const f = (date: string, q: number, item = 'SKU-0001') =>
        sale(date, q, { item_name: item, customer_group_name: 'WF-Group-C', sale_type_name: 'Forecast' });
      const res = await syncSales({
        dry_run: true,
        mode: 'replace',
        scope: { sale_type: 'Forecast', customer_group: 'WF-Group-C' },
        options: { continue_on_error: false },
        data: [f(d[0]!, 1), f(d[1]!, 5), f(d[3]!, 1), f(d[3]!, 1, 'WF-ITEM-2'), f(d[3]!, -1, 'SKU-0002')],
      });
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.message, /Dry run completed: nothing was written/);
      assert.deepEqual(res.body.data, [
        {
          dry_run: true,
          total: 5,
          result: { created: 2, updated: 1, deleted: before.length - 2, unchanged: 1, failed: 1 },
          errors: [{ row: 4, field: 'data.4.quantity', message: 'The data.4.quantity field must be at least 0.' }],
          errors_count: 1,
        },
      ]);
      assert.deepEqual(await snapshot(), before);
      assert.equal((await combos()).records.length, combosBefore, 'no combination created');
    });
  });

  describe('Idempotency-Key', () => {
    it('same key and body: the first answer again, marked replayed, and the work done once', async () => {
      const body = { data: days('2035-01-01', 3).map((x) => sale(x, 1)) };
      const headers = { 'Idempotency-Key': 'load-2035-01' };
      const first = await syncSales(body, { key: headers['Idempotency-Key'] });
      assert.equal(first.status, 202);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      await waitForJob(sys, 'demo', token, first.body.data[0].job_id);
      const again = await syncSales(body, { key: headers['Idempotency-Key'] });
      assert.equal(again.status, 202);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
      assert.equal(
        (
          await salesRecords(sys.clients, 'demo', {
            item_names: ['SKU-0001'],
            customer_group_names: ['Retail'],
            sell_date_from: '2035-01-01',
            sell_date_to: '2035-01-03',
          })
        ).length,
        3,
      );
      const dry = { dry_run: true, data: [sale('2035-01-01', 1)] };
      const d1 = await syncSales(dry, { key: 'dry-2035' });
      const d2 = await syncSales(dry, { key: 'dry-2035' });
      assert.equal(d2.status, 200);
      assert.equal(d2.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(d2.body, d1.body);
    });

    it('same key with another body: 422 on Idempotency-Key; keys are per tenant', async () => {
      const headers = { 'Idempotency-Key': 'load-2035-02' };
      assert.equal((await syncSales({ data: [sale('2035-02-01', 1)] }, { key: headers['Idempotency-Key'] })).status, 202);
      const other = await syncSales({ data: [sale('2035-02-01', 2)] }, { key: headers['Idempotency-Key'] });
      assert.equal(other.status, 422);
      assert.deepEqual(Object.keys(other.body.errors), ['Idempotency-Key']);
      const acme = await sys.tokenFor('acme', 'admin@acme.test', ['*']);
      const elsewhere = await syncSales(
        { data: [sale('2035-02-01', 2)] },
        { tenant: 'acme', token: acme, key: headers['Idempotency-Key'] },
      );
      assert.equal(elsewhere.status, 202, elsewhere.text);
      assert.equal(elsewhere.headers.get('idempotent-replayed'), null);
    });

    it('a refused first request leaves the key free; a malformed key is a 422', async () => {
      const headers = { 'Idempotency-Key': 'load-2035-03' };
      assert.equal((await syncSales({ data: [] }, { key: headers['Idempotency-Key'] })).status, 422);
      assert.equal((await syncSales({ data: [sale('2035-03-01', 1)] }, { key: headers['Idempotency-Key'] })).status, 202);
      const bad = await syncSales({ data: [sale('2035-03-02', 1)] }, { key: 'x'.repeat(256) });
      assert.equal(bad.status, 422);
      assert.ok(bad.body.errors['Idempotency-Key']);
    });
  });

  describe('GET /jobs/{id}', () => {
    it("is readable by the creating token and the same user's other tokens; anyone else gets 404", async () => {
      const res = await syncSales({ data: [sale('2036-01-01', 1)] });
      const id = res.body.data[0].job_id;
      await waitForJob(sys, 'demo', token, id);
      const readJob = (tenant: string, jobId: string, bearer?: string) =>
        client(bearer)
          .GET('/{tenant}/api/v1/jobs/{job_id}', { params: { path: { tenant, job_id: jobId } } })
          .then(answered);
      const own = await readJob('demo', String(id), secondToken);
      assert.equal(own.status, 200);
      assert.deepEqual(Object.keys(own.body.data[0]).sort(), [
        'created_at',
        'errors',
        'errors_count',
        'finished_at',
        'job_id',
        'kind',
        'message',
        'progress',
        'result',
        'started_at',
        'status',
        'updated_at',
      ]);
      assert.equal(own.body.data[0].kind, 'sales_sync');
      for (const other of [adminToken, await sys.tokenFor('acme', 'admin@acme.test', ['*'])]) {
        const tenant = other === adminToken ? 'demo' : 'acme';
        const res404 = await readJob(tenant, String(id), other);
        assert.equal(res404.status, 404);
        assert.equal(res404.body.type, '/problems/not-found');
      }
      for (const bad of ['999999', '0', 'abc', '1e3']) assert.equal((await readJob('demo', bad, token)).status, 404);
      assert.equal(
        (
          await createSupplyClient({ baseUrl: sys.baseUrl }).GET('/{tenant}/api/v1/jobs/{job_id}', {
            params: { path: { tenant: 'demo', job_id: String(id) } },
          })
        ).response.status,
        401,
      );
    });
  });

  describe('limits', () => {
    it('takes at most 5 sync jobs queued or running per workspace: the next is 429 with Retry-After', async () => {
      const items = Array.from({ length: 40 }, (_, i) => `SKU-${String(i + 1).padStart(4, '0')}`);
      const load = (year: number) => ({
        data: days(`${year}-01-01`, 75).flatMap((x) =>
          items.map((item) => sale(x, 1, { item_name: item, customer_group_name: 'WF-Group-A' })),
        ),
      });
      // Eight at once: a job may finish while the later requests are still being staged, which frees its slot.
      const answers = await Promise.all([2050, 2051, 2052, 2053, 2054, 2055, 2056, 2057].map((year) => syncSales(load(year))));
      const statuses = answers.map((a) => a.status).sort();
      const jobs = await Promise.all(
        answers.filter((a) => a.status === 202).map((a) => waitForJob(sys, 'demo', token, a.body.data[0].job_id, 60_000)),
      );
      // The limit is on jobs open at once: when each accepted job was created, fewer than 5 others were queued or running.
      for (const job of jobs) {
        const open = jobs.filter((other) => other !== job && other.created_at < job.created_at && other.finished_at > job.created_at);
        assert.ok(open.length < 5, `job ${job.id} was accepted with ${open.length} others open (${statuses.join()})`);
      }
      const refused = answers.find((a) => a.status === 429);
      assert.ok(refused, `one of ${statuses.join()} is 429`);
      assert.equal(refused.body.type, '/problems/rate-limited');
      assert.match(refused.body.detail, /already has 5 sync jobs queued or running \(at most 5\)/);
      assert.equal(refused.headers.get('retry-after'), '10');
    });
  });

  describe('inventory', () => {
    const inv = (item: string, location: string, date: string, quantity: number, extra: Partial<InventoryRow> = {}): InventoryRow => ({
      item_name: item,
      location_name: location,
      inventory_date: date,
      quantity,
      uom: 'ea',
      ...extra,
    });

    it('upserts by item, location, bin, lot and date; replace by location deletes the rest of that location only', async () => {
      const date = '2036-06-30';
      const job = await run(syncInventory, {
        data: [
          inv('SKU-0001', 'DC-East', date, 10),
          inv('SKU-0001', 'DC-East', date, 4, { bin_name: 'B1' }),
          inv('SKU-0001', 'DC-East', date, 6, { bin_name: 'B1', lot_name: 'L7' }),
          inv('SKU-0002', 'DC-West', date, 3),
        ],
      });
      assert.equal(job.kind, 'inventory_sync');
      assert.deepEqual(job.result, { created: 4, updated: 0, deleted: 0, unchanged: 0, failed: 0 });
      const bad = await run(syncInventory, {
        options: { continue_on_error: true },
        data: [inv('SKU-0001', 'Nowhere', date, 1), inv('SKU-0001', 'DC-East', date, -2)],
      });
      assert.deepEqual(
        bad.errors.map((e: { field: string }) => e.field),
        ['data.0.location_name', 'data.1.quantity'],
      );

      const eastBefore = await inventoryRecords(sys.clients, 'demo', { location_names: ['DC-East'] });
      const westBefore = await inventoryRecords(sys.clients, 'demo', { location_names: ['DC-West'] });
      const replaced = await run(syncInventory, {
        mode: 'replace',
        scope: { location: 'DC-East' },
        data: [inv('SKU-0001', 'DC-East', date, 12), inv('SKU-0001', 'DC-East', date, 4, { bin_name: 'B1' })],
      });
      assert.equal(replaced.status, 'succeeded', JSON.stringify(replaced));
      assert.deepEqual(replaced.result, { created: 0, updated: 1, deleted: eastBefore.length - 2, unchanged: 1, failed: 0 });
      const east = await inventoryRecords(sys.clients, 'demo', { location_names: ['DC-East'] });
      assert.deepEqual(east.map((r) => [r.item_name, r.bin_name, r.lot_name, r.quantity]).sort(), [
        ['SKU-0001', '', '', 12],
        ['SKU-0001', 'B1', '', 4],
      ]);
      assert.equal((await inventoryRecords(sys.clients, 'demo', { location_names: ['DC-West'] })).length, westBefore.length);
    });

    it('allow_record_creation false only updates records that exist', async () => {
      const date = '2036-07-31';
      await run(syncInventory, { data: [inv('SKU-0003', 'DC-West', date, 1)] });
      const job = await run(syncInventory, {
        options: { allow_record_creation: false, continue_on_error: true },
        data: [inv('SKU-0003', 'DC-West', date, 2), inv('SKU-0004', 'DC-West', date, 2)],
      });
      assert.deepEqual(job.result, { created: 0, updated: 1, deleted: 0, unchanged: 0, failed: 1 });
      assert.match(job.errors[0].message, /No inventory record with this item, location, bin, lot and inventory date exists/);
    });
  });

  describe('legacy loads', () => {
    const LEGACY = '/demo/api/v1/sales';
    const args = { allow_record_creation: true, allow_record_update: true, should_continue_on_error: true };

    it('POST /sales answers success_message and job_log_id, the id GET /jobs/{id} knows', async () => {
      const res = await post(LEGACY, { arguments: args, payload: [sale('2037-01-01', 3), sale('2037-01-02', -1)] });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['job_log_id', 'success_message']);
      assert.equal(typeof res.body.job_log_id, 'number');
      const job = await waitForJob(sys, 'demo', token, res.body.job_log_id);
      assert.equal(job.kind, 'sales_sync');
      assert.equal(job.status, 'partially_succeeded');
      assert.deepEqual(
        job.errors.map((e: { field: string }) => e.field),
        ['payload.1.quantity'],
      );
    });

    it('POST /sales arguments are required booleans: the legacy 422', async () => {
      const res = await post(LEGACY, { arguments: { allow_record_creation: true }, payload: [sale('2037-01-01', 3)] });
      assert.equal(res.status, 422);
      assert.equal(res.body.success, false);
      assert.deepEqual(Object.keys(res.body.errors).sort(), ['arguments.allow_record_update', 'arguments.should_continue_on_error']);
      assert.match(res.body.message, /^The arguments\.allow_record_update field is required\. \(and 1 more error\)$/);
      const noPayload = await post(LEGACY, { arguments: args });
      assert.equal(noPayload.status, 422);
      assert.ok(noPayload.body.errors.payload);
    });

    it('POST /inventory/import/process loads inventory rows the same way', async () => {
      const res = await post('/demo/api/v1/inventory/import/process', {
        arguments: { allow_record_creation: true, allow_record_update: true, should_continue_on_error: false },
        payload: [{ item_name: 'SKU-0005', location_name: 'DC-West', inventory_date: '2037-02-01', quantity: 8, uom: 'ea' }],
      });
      assert.equal(res.status, 200, res.text);
      const job = await waitForJob(sys, 'demo', token, res.body.job_log_id);
      assert.equal(job.kind, 'inventory_sync');
      assert.equal(job.result.created, 1);
    });
  });
});
