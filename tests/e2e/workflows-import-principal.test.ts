// File imports act for the token that sent them, whatever the token's kind, the file's size
// and whatever else runs meanwhile. The body of a real upload reaches the gateway after its
// headers (curl waits for `100 Continue`, a network splits megabytes into many reads), so
// these uploads are sent that way: the parts arrive in the socket's own event callbacks.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { runAdmin as main } from '@supply/tokens';
import { api, startSystem, type TestSystem } from '../support/system';
import { busEnv, days, dropBusNamespace, salesCsv, salesRow, waitForJob } from './workflows-support';

const IMPORT = '/demo/api/v1/workflows/sync-sales/import';
const PASSWORD = 'demo-password-123';
const asDemo = { context: { requestId: 'test', tenant: 'demo' } };

interface Answer {
  status: number;
  body: any;
  text: string;
}

/**
 * A multipart upload whose body follows its headers: with `Expect: 100-continue` (as curl
 * sends it) the body waits for the server's go-ahead; otherwise the headers go first and
 * the body follows in 64 KB writes. `trickle`: the body starts 300 ms after the headers,
 * in 256-byte writes 20 ms apart, as from a slow client (so even a busy server has started
 * reading it before its file part arrives).
 */
function upload(
  sys: TestSystem,
  path: string,
  token: string,
  csv: string,
  opts: { fields?: Record<string, string>; expectContinue?: boolean; trickle?: boolean } = {},
): Promise<Answer> {
  const boundary = `----import${Math.random().toString(16).slice(2)}`;
  const parts = Object.entries(opts.fields ?? {}).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const head = `${parts.join('')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="load.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head), Buffer.from(csv), Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return new Promise((resolve, reject) => {
    const req = request(
      `${sys.baseUrl}${path}`,
      {
        method: 'POST',
        // A connection of its own: a kept-alive one may be closed by the server just as it is reused.
        agent: false,
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'application/json',
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': String(body.length),
          ...(opts.expectContinue ? { Expect: '100-continue' } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    const piece = opts.trickle ? 256 : 64 * 1024;
    const send = async () => {
      if (opts.trickle) await sleep(300);
      for (let at = 0; at < body.length; at += piece) {
        if (!req.write(body.subarray(at, at + piece))) await new Promise((r) => req.once('drain', r));
        if (opts.trickle) await sleep(20);
      }
      req.end();
    };
    if (opts.expectContinue) req.once('continue', () => void send().catch(reject));
    else {
      req.flushHeaders();
      setTimeout(() => void send().catch(reject), 20);
    }
  });
}

/** `count` valid History rows on consecutive days from `start`, quantity `q`. */
const rows = (start: string, count: number, q = 1) => days(start, count).map((d) => salesRow(d, q));

describe('workflows: file imports act for the token that sent them', function () {
  this.timeout(240_000);
  const bus = busEnv();
  let sys: TestSystem;
  /** Every kind of token a client may hold, each of planner@demo.test. */
  const tokens: Record<'legacy exchange' | 'POST /tokens' | 'operator CLI', string> = {
    'legacy exchange': '',
    'POST /tokens': '',
    'operator CLI': '',
  };

  before(async () => {
    // Room for the 50 concurrent jobs of the last test (5 by default).
    sys = await startSystem({ env: { ...bus, SYNC_JOBS_PER_TENANT: '60' } });
    await sys.clients.tokens.updateTenant({ slug: 'demo', rate_limit: 1_000_000, monthly_credits: 100_000_000 }, asDemo);

    const exchanged = await api(sys, '/demo/api/v1/tokens/create', {
      method: 'POST',
      body: { email: 'planner@demo.test', password: PASSWORD },
    });
    assert.equal(exchanged.status, 200, exchanged.text);
    tokens['legacy exchange'] = exchanged.body.token;

    const creator = await sys.tokenFor('demo', 'planner@demo.test', ['*']);
    const created = await api(sys, '/demo/api/v1/tokens', {
      method: 'POST',
      token: creator,
      body: { name: 'importer', scopes: ['public_api.workflow', 'public_api.read'] },
    });
    assert.equal(created.status, 201, created.text);
    tokens['POST /tokens'] = created.body.data[0].plain_text_token;

    let stdout = '';
    const env = { DATA_DIR: sys.dataDir, GRPC_BASE_PORT: String(sys.config.GRPC_BASE_PORT), LOG_LEVEL: 'silent' };
    const code = await main(
      ['token', 'create', 'demo', 'planner@demo.test', '--name', 'cli importer', '--scopes', 'public_api.workflow,public_api.read'],
      {
        env,
        stdout: (line) => (stdout += line),
        stderr: () => undefined,
      },
    );
    assert.equal(code, 0);
    tokens['operator CLI'] = stdout.trim();
  });
  after(async () => {
    await sys?.stop();
    await dropBusNamespace(bus);
  });

  const readJob = (token: string, id: number) => api(sys, `/demo/api/v1/jobs/${id}`, { token });

  it('imports with every kind of token, with and without Expect: 100-continue; the job is its creator’s', async () => {
    let year = 2050;
    for (const [kind, token] of Object.entries(tokens)) {
      for (const expectContinue of [false, true]) {
        const res = await upload(sys, IMPORT, token, salesCsv(rows(`${year++}-01-01`, 5)), { expectContinue });
        assert.equal(res.status, 202, `${kind}, Expect: ${expectContinue}: ${res.text}`);
        const job = await waitForJob(sys, 'demo', token, res.body.data[0].job_id);
        assert.equal(job.status, 'succeeded', JSON.stringify(job));
        assert.equal(job.result.created, 5);
        assert.equal((await readJob(token, job.job_id)).status, 200, `${kind}: its creator reads the job`);
      }
    }
    // The legacy CSV load goes the same way.
    const legacy = await upload(sys, '/demo/api/v1/sales', tokens['legacy exchange'], salesCsv(rows('2060-01-01', 3)), {
      fields: { allow_record_creation: '1', allow_record_update: '1', should_continue_on_error: '0' },
      expectContinue: true,
    });
    assert.equal(legacy.status, 200, legacy.text);
    assert.equal((await waitForJob(sys, 'demo', tokens['legacy exchange'], legacy.body.job_log_id)).status, 'succeeded');
  });

  it('takes files of every size up to megabytes (dry runs of 10 to 100,000 rows)', async () => {
    const year = days('2070-01-01', 365);
    for (const count of [10, 1_000, 3_000, 30_000, 100_000]) {
      // Many rows on few days: what a dry run finds does not matter here, only that it runs.
      const csv = salesCsv(Array.from({ length: count }, (_, i) => salesRow(year[i % 365]!, i)));
      for (const [kind, token] of Object.entries(tokens)) {
        const res = await upload(sys, IMPORT, token, csv, { fields: { dry_run: 'true' }, expectContinue: count % 2 === 0 });
        assert.equal(res.status, 200, `${kind}, ${count} rows (${csv.length} bytes): ${res.text}`);
        assert.equal(res.body.data[0].total, count);
      }
    }
  });

  it('keeps 50 concurrent imports apart while other tokens read: all 202, each job readable by its creator only', async () => {
    // Five users, with two tokens each, so a job attributed to the wrong token or user shows.
    const users = ['planner@demo.test'];
    for (let i = 0; i < 4; i++) {
      const email = `importer${i}@demo.test`;
      await sys.clients.tokens.createUser(
        { email, password: PASSWORD, is_admin: false, levels: { public_api: 'planner', demand: 'planner', master_data: 'view' } },
        asDemo,
      );
      users.push(email);
    }
    const importers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => sys.tokenFor('demo', users[i % users.length]!, ['public_api.workflow', 'public_api.read'])),
    );
    const siblings = await Promise.all(users.map((email) => sys.tokenFor('demo', email, ['public_api.read'])));
    const readers = await Promise.all(Array.from({ length: 10 }, () => sys.tokenFor('demo', 'viewer@demo.test', ['public_api.read'])));

    const imports = importers.map((token, i) =>
      upload(sys, IMPORT, token, salesCsv(rows(`${2100 + i}-01-01`, 20, i + 1)), { expectContinue: i % 2 === 0, trickle: true }).then(
        (res) => ({ i, token, res }),
      ),
    );
    const reads = readers.flatMap((token) => Array.from({ length: 5 }, () => api(sys, '/demo/api/v1/items?per_page=5', { token })));
    const [done, read] = await Promise.all([Promise.all(imports), Promise.all(reads)]);

    for (const r of read) assert.equal(r.status, 200, r.text);
    for (const { i, res } of done) assert.equal(res.status, 202, `import ${i}: ${res.text}`);
    for (const { i, token, res } of done) {
      const id: number = res.body.data[0].job_id;
      const owner = i % users.length;
      const job = await waitForJob(sys, 'demo', token, id);
      assert.equal(job.status, 'succeeded', `import ${i}: ${JSON.stringify(job)}`);
      assert.equal(job.result.created, 20);
      assert.equal((await readJob(token, id)).status, 200, `import ${i}: read by the token that sent it`);
      assert.equal((await readJob(siblings[owner]!, id)).status, 200, `import ${i}: read by another token of its user`);
      assert.equal((await readJob(siblings[(owner + 1) % users.length]!, id)).status, 404, `import ${i}: hidden from other users`);
    }
  });
});
