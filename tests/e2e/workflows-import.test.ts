import assert from 'node:assert/strict';
import { request } from 'node:http';
import { api, startSystem, type TestSystem } from '../support/system';
import { busEnv, days, dropBusNamespace, postFile, SALES_HEADER, salesCsv, salesRecords, salesRow, waitForJob } from './workflows-support';

const IMPORT = '/demo/api/v1/workflows/sync-sales/import';
const call = { context: { requestId: 'test', tenant: 'demo' } };

describe('workflows: CSV file imports', function () {
  this.timeout(60_000);
  const bus = busEnv();
  let sys: TestSystem;
  let token: string;

  const upload = (
    file: string | Uint8Array | undefined,
    fields: Record<string, string> = {},
    headers: Record<string, string> = {},
    path = IMPORT,
  ) => postFile(sys, path, { token, file, fields, headers });

  async function accepted(res: Awaited<ReturnType<typeof upload>>) {
    assert.equal(res.status, 202, res.text);
    return waitForJob(sys, 'demo', token, res.body.data[0].job_id);
  }

  const stored = (from: string, to: string, item = 'SKU-0001') =>
    salesRecords(sys.clients, 'demo', { item_names: [item], customer_group_names: ['Retail'], sell_date_from: from, sell_date_to: to });

  before(async () => {
    sys = await startSystem({ env: bus });
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 100_000 }, call);
    token = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    await sys.clients.reference.createItems(
      { array_body: true, records: [{ name: 'WF "Big", Pack', uom: 'ea', unit_cost: 1, unit_price: 2 }] },
      call,
    );
  });
  after(async () => {
    await sys?.stop();
    await dropBusNamespace(bus);
  });

  it('reads UTF-8 with a BOM, CRLF line ends and RFC 4180 quoting (commas and doubled quotes inside fields)', async () => {
    const d = days('2041-01-01', 2);
    const csv = `\ufeff${SALES_HEADER}\r\nHistory,"WF ""Big"", Pack",Retail,${d[0]},day,3,ea\r\n"History","SKU-0001","Retail",${d[1]},"day","1.5","Each"\r\n`;
    const job = await accepted(await upload(csv));
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.result.created, 2);
    assert.deepEqual(
      (await stored(d[0]!, d[0]!, 'WF "Big", Pack')).map((r) => [r.item_name, r.quantity]),
      [['WF "Big", Pack', 3]],
    );
    assert.deepEqual(
      (await stored(d[1]!, d[1]!)).map((r) => [r.quantity, r.uom_abbr]),
      [[1.5, 'ea']],
    );
  });

  it('matches headers loosely unless headers_match_exactly, ignoring unknown columns', async () => {
    const d = days('2041-02-01', 1)[0]!;
    const loose = `Note,UOM,Quantity,Timing Interval,Sell-Date,Customer Group Name,Item Name,Sale Type Name\nfirst,ea,4,day,${d},Retail,SKU-0001,History\n`;
    const job = await accepted(await upload(loose));
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual(
      (await stored(d, d)).map((r) => r.quantity),
      [4],
    );

    const exact = await upload(loose, { headers_match_exactly: 'true' });
    assert.equal(exact.status, 422);
    assert.deepEqual(Object.keys(exact.body.errors), ['file']);
    assert.match(exact.body.errors.file[0], /header row must be exactly the field names .*unknown column "Note"/);
    const ok = await accepted(await upload(salesCsv([salesRow(d, 5)]), { headers_match_exactly: '1' }));
    assert.equal(ok.result.updated, 1);
  });

  it('refuses a header that lacks a required column: 422 on file', async () => {
    const res = await upload('sale_type_name,item_name,sell_date,quantity\nHistory,SKU-0001,2041-03-01,1\n');
    assert.equal(res.status, 422);
    assert.match(res.body.errors.file[0], /missing customer_group_name, timing_interval, uom/);
  });

  it('field_mappings[i] names the field of the i-th column (JSON string, list or bracket fields); "" skips a column', async () => {
    const d = days('2041-04-01', 3);
    const csv = (q: number, date: string) => `qty,skip,when,who,what,kind,span,unit\n${q},x,${date},Retail,SKU-0001,History,day,ea\n`;
    const mapping = ['quantity', '', 'sell_date', 'customer_group_name', 'item_name', 'sale_type_name', 'timing_interval', 'uom'];
    const asJson = await accepted(await upload(csv(7, d[0]!), { field_mappings: JSON.stringify(mapping) }));
    assert.equal(asJson.status, 'succeeded', JSON.stringify(asJson));
    const bracketed = Object.fromEntries(mapping.map((f, i) => [`field_mappings[${i}]`, f]));
    assert.equal((await accepted(await upload(csv(8, d[1]!), bracketed))).status, 'succeeded');
    const form = new FormData();
    for (const f of mapping) form.append('field_mappings[]', f);
    form.append('file', new Blob([csv(9, d[2]!)]), 'x.csv');
    const listed = await fetch(`${sys.baseUrl}${IMPORT}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
      body: form,
    });
    assert.equal(listed.status, 202);
    await waitForJob(sys, 'demo', token, ((await listed.json()) as any).data[0].job_id);
    assert.deepEqual(
      (await stored(d[0]!, d[2]!)).map((r) => r.quantity),
      [7, 8, 9],
    );

    const unknown = await upload(csv(1, d[0]!), { field_mappings: JSON.stringify(['quantity', 'colour']) });
    assert.equal(unknown.status, 422);
    assert.deepEqual(Object.keys(unknown.body.errors), ['field_mappings.1']);
    const incomplete = await upload(csv(1, d[0]!), { field_mappings: JSON.stringify(['quantity', '', 'sell_date']) });
    assert.equal(incomplete.status, 422);
    assert.match(incomplete.body.errors.field_mappings[0], /missing: sale_type_name, item_name, customer_group_name, timing_interval, uom/);
    const tooMany = await upload(csv(1, d[0]!), { field_mappings: JSON.stringify([...mapping, '']) });
    assert.equal(tooMany.status, 422);
    assert.match(tooMany.body.errors.field_mappings[0], /the file has 8 columns/);
  });

  it('takes scope and options as JSON strings or bracket fields', async () => {
    const d = days('2041-05-01', 2);
    const csv = salesCsv([salesRow(d[0]!, 1), salesRow(d[1]!, -1)]);
    const asJson = await accepted(await upload(csv, { options: JSON.stringify({ continue_on_error: true }) }));
    assert.equal(asJson.status, 'partially_succeeded');
    assert.deepEqual(
      asJson.errors.map((e: { field: string }) => e.field),
      ['data.1.quantity'],
    );
    const asBrackets = await accepted(await upload(csv, { 'options[continue_on_error]': 'false' }));
    assert.equal(asBrackets.status, 'failed');
    const badOptions = await upload(csv, { options: '{"continue_on_error": "perhaps"}' });
    assert.equal(badOptions.status, 422);
    assert.deepEqual(Object.keys(badOptions.body.errors), ['options.continue_on_error']);

    const limited = await sys.tokenFor('demo', 'planner@demo.test', ['public_api.workflow']);
    const replaceDenied = await postFile(sys, IMPORT, {
      token: limited,
      file: csv,
      fields: { mode: 'replace', 'scope[customer_group]': 'Retail' },
    });
    assert.equal(replaceDenied.status, 403);
    assert.equal(replaceDenied.body.type, '/problems/insufficient-scope');
    const noScope = await upload(csv, { mode: 'replace' });
    assert.equal(noScope.status, 422);
    assert.ok(noScope.body.errors.scope);
  });

  it('a record with another number of fields than the header is a row error', async () => {
    const d = days('2041-06-01', 2);
    const csv = `${SALES_HEADER}\nHistory,SKU-0001,Retail,${d[0]},day,1,ea\nHistory,SKU-0001,Retail,${d[1]},day,1\n`;
    const job = await accepted(await upload(csv, { 'options[continue_on_error]': '1' }));
    assert.deepEqual(job.errors, [{ row: 1, field: 'data.1', message: 'The data.1 record has 6 fields; the header has 7.' }]);
    assert.equal(job.result.created, 1);
  });

  it('a malformed file is a 422 on file, never a 500', async () => {
    const cases: Array<[string | Uint8Array, RegExp]> = [
      [`${SALES_HEADER}\nHistory,"SKU-0001,Retail,2041-07-01,day,1,ea\n`, /quoted field is never closed/],
      [`${SALES_HEADER}\nHistory,"SKU"-0001,Retail,2041-07-01,day,1,ea\n`, /closing quote is followed by other characters/],
      [
        Buffer.concat([
          Buffer.from(`${SALES_HEADER}\nHistory,SKU-`),
          Buffer.from([0xff, 0xfe, 0x41]),
          Buffer.from(',Retail,2041-07-01,day,1,ea\n'),
        ]),
        /must be UTF-8/,
      ],
      ['', /file is empty/],
      [`${SALES_HEADER}\n`, /no data rows/],
    ];
    for (const [file, message] of cases) {
      const res = await upload(file);
      assert.equal(res.status, 422, `${message}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body.errors), ['file']);
      assert.match(res.body.errors.file[0], message);
    }
    const none = await upload(undefined, { mode: 'upsert' });
    assert.equal(none.status, 422);
    assert.equal(none.body.errors.file[0], 'The file field is required.');
    // A JSON body is a type this route does not read (the one rule for body-taking routes).
    const json = await api(sys, IMPORT, { method: 'POST', token, body: { data: [] } });
    assert.equal(json.status, 415);
    assert.match(json.body.detail, /multipart\/form-data/);
    const broken = await fetch(`${sys.baseUrl}${IMPORT}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nsale_type_name',
    });
    assert.equal(broken.status, 422);
  });

  it('a file over 10240 KB is a 422 on file', async () => {
    const big = `${SALES_HEADER}\n${'\n'.repeat(10_240 * 1024)}`;
    const res = await upload(big);
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.errors, { file: ['The file must not be greater than 10240 kilobytes.'] });
  });

  it('dry_run answers 200 with the counts and writes nothing', async () => {
    const d = days('2041-08-01', 3);
    await accepted(await upload(salesCsv([salesRow(d[0]!, 1), salesRow(d[1]!, 1)])));
    const before = await stored(d[0]!, d[2]!);
    const res = await upload(
      salesCsv([salesRow(d[0]!, 1), salesRow(d[1]!, 2), salesRow(d[2]!, 1), salesRow(d[2]!, 1, { uom: 'litre', item_name: 'SKU-0002' })]),
      { dry_run: 'true' },
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data[0].result, { created: 1, updated: 1, deleted: 0, unchanged: 1, failed: 1 });
    assert.deepEqual(
      res.body.data[0].errors.map((e: { field: string }) => e.field),
      ['data.3.uom'],
    );
    assert.deepEqual(await stored(d[0]!, d[2]!), before);
  });

  it('Idempotency-Key: the same file replays, another file is a 422, and a repeat while the first still uploads is a 409', async () => {
    const csv = salesCsv([salesRow('2041-09-01', 1)]);
    const first = await upload(csv, {}, { 'Idempotency-Key': 'file-2041-09' });
    assert.equal(first.status, 202);
    const again = await upload(csv, {}, { 'Idempotency-Key': 'file-2041-09' });
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    const other = await upload(salesCsv([salesRow('2041-09-01', 2)]), {}, { 'Idempotency-Key': 'file-2041-09' });
    assert.equal(other.status, 422);
    assert.ok(other.body.errors['Idempotency-Key']);

    // The first request sends half its file and waits; the key is taken from its first bytes.
    const boundary = 'held-upload';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="held.csv"\r\nContent-Type: text/csv\r\n\r\n${SALES_HEADER}\n`;
    const tail = `History,SKU-0001,Retail,2041-09-02,day,1,ea\n\r\n--${boundary}--\r\n`;
    const url = new URL(`${sys.baseUrl}${IMPORT}`);
    const held = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        Accept: 'application/json',
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': Buffer.byteLength(head) + Buffer.byteLength(tail),
        'Idempotency-Key': 'file-held',
      },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      held.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      held.on('error', reject);
    });
    held.write(head);
    let conflict: Awaited<ReturnType<typeof upload>> | undefined;
    for (let i = 0; i < 40; i++) {
      await new Promise((r) => setTimeout(r, 50));
      conflict = await upload(csv, {}, { 'Idempotency-Key': 'file-held' });
      if (conflict.status === 409) break;
    }
    assert.equal(conflict!.status, 409, conflict!.text);
    assert.equal(conflict!.body.type, '/problems/conflict');
    assert.match(conflict!.body.detail, /still being processed/);
    held.end(tail);
    const done = await answered;
    assert.equal(done.status, 202, done.body);
  });

  it('legacy POST /sales takes a CSV upload with its arguments as form fields', async () => {
    const csv = salesCsv([salesRow('2041-10-01', 6)]);
    const args = { allow_record_creation: '1', allow_record_update: '1', should_continue_on_error: '0' };
    const res = await upload(csv, args, {}, '/demo/api/v1/sales');
    assert.equal(res.status, 200, res.text);
    const job = await waitForJob(sys, 'demo', token, res.body.job_log_id);
    assert.equal(job.status, 'succeeded');
    const missing = await upload(csv, { allow_record_creation: '1' }, {}, '/demo/api/v1/sales');
    assert.equal(missing.status, 422);
    assert.equal(missing.body.success, false);
    assert.deepEqual(Object.keys(missing.body.errors).sort(), ['allow_record_update', 'should_continue_on_error']);
    const inventory = await upload(
      'item_name,location_name,inventory_date,quantity,uom\nSKU-0006,DC-East,2041-10-01,2,ea\n',
      {
        'arguments[allow_record_creation]': 'true',
        'arguments[allow_record_update]': 'true',
        'arguments[should_continue_on_error]': 'false',
      },
      {},
      '/demo/api/v1/inventory/import/process',
    );
    assert.equal(inventory.status, 200, inventory.text);
    assert.equal((await waitForJob(sys, 'demo', token, inventory.body.job_log_id)).result.created, 1);
  });
});
