// Cursor reads at depth: 1,000,000 sales records loaded through the apply path, then walked
// through the gateway (/sales-data, per_page 5000) in two orders, side by side with a raw
// store scan of the same records in the same run. `npm run bench -- transactional` or
// `npx tsx tests/bench/transactional.ts`. BENCH_RECORDS=100000 loads fewer records (a multiple of
// 10,000) while iterating.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { supply_transactional_v1 as pb } from '@supply/contracts';
import { applySales, openSales, readPage, SALES_PAGES, timestamp } from '@supply/transactional';
import { api, startSystem } from '../support/system';

const TOTAL = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const ITEMS = 2_000;
const GROUPS = 5;
const WEEKS = TOTAL / (ITEMS * GROUPS);
const CHUNK = 10_000;
const PER_PAGE = 5_000;
/** Full pages timed at each end of a walk. */
const SAMPLE = 5;
/** Times each end page is read again. */
const ROUNDS = 3;
const TENANT = 'acme';

const rate = (count: number, ms: number) => `${Math.round((count / ms) * 1000).toLocaleString('en-US')}/s`;
const week = (i: number) => new Date(Date.UTC(2015, 0, 5 + 7 * i)).toISOString().slice(0, 10);

/** Rows of one chunk: whole series (item x customer group), so the apply reads one key range per series. */
function chunkRows(start: number): pb.SalesRow[] {
  const rows: pb.SalesRow[] = [];
  for (let n = start; n < start + CHUNK; n++) {
    const series = Math.floor(n / WEEKS);
    const item = Math.floor(series / GROUPS);
    const group = series % GROUPS;
    rows.push({
      item_customer_group_id: 1_000_000 + series,
      item_id: 1_000_000 + item,
      item_name: `BENCH-${String(item + 1).padStart(5, '0')}`,
      customer_group_id: 1_000 + group,
      customer_group_name: `Bench group ${group + 1}`,
      sale_type_id: 1,
      sale_type_name: 'History',
      timing_interval_id: 2,
      timing_interval_span: 'week',
      uom_id: 1,
      uom_name: 'Each',
      uom_abbr: 'ea',
      sell_date: week(n % WEEKS),
      quantity: (n * 7919) % 1000,
    });
  }
  return rows;
}

export async function run(): Promise<void> {
  const sys = await startSystem();
  // RSS includes the LMDB map's file-backed pages; the JS heap is sampled apart.
  let peakHeap = 0;
  let peakExternal = 0;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peakHeap = Math.max(peakHeap, usage.heapUsed);
    peakExternal = Math.max(peakExternal, usage.external);
  }, 100);
  try {
    const sales = { sales: await openSales(await sys.proc.deps.openStore('transactional')), clients: sys.clients, now: () => timestamp() };
    const loadStart = performance.now();
    for (let start = 0; start < TOTAL; start += CHUNK) {
      await applySales(sales, TENANT, {
        load_id: 'bench',
        rows: chunkRows(start),
        refuse_creates: false,
        refuse_updates: false,
        dry_run: false,
      });
    }
    const loadMs = performance.now() - loadStart;
    const rssAfterLoad = process.resourceUsage().maxRSS * 1024;
    const stored = await sales.sales.count({ tenant: TENANT });
    console.log(
      `load: ${TOTAL.toLocaleString('en-US')} sales records through applySales in ${CHUNK.toLocaleString('en-US')}-row chunks: ${(loadMs / 1000).toFixed(1)} s (${rate(TOTAL, loadMs)}); ${stored.toLocaleString('en-US')} records in ${TENANT} with its demo data`,
    );

    await sys.clients.tokens.updateTenant({ slug: TENANT, rate_limit: 1_000_000, monthly_credits: 1_000_000_000 });
    const token = await sys.tokenFor(TENANT, 'admin@acme.test', ['public_api.read']);

    /** Walks to the end by next_cursor; returns the URL of every full page, to time again, and the walk's rate. */
    const walk = async (query: string) => {
      const urls: string[] = [];
      let records = 0;
      let cursor: string | null = null;
      const t0 = performance.now();
      do {
        const url: string = `/${TENANT}/api/v1/sales-data?per_page=${PER_PAGE}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await api(sys, url, { token }).catch((err: Error) => {
          throw new Error(
            `page ${urls.length + 1} of the walk${query}: ${err.message} (${(err.cause as Error | undefined)?.message ?? ''})`,
          );
        });
        if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.text.slice(0, 200)}`);
        if (res.body.data.length === PER_PAGE) urls.push(url);
        records += res.body.data.length;
        cursor = res.body.meta.pagination.next_cursor;
      } while (cursor);
      return { urls, records, ms: performance.now() - t0 };
    };
    const viaGateway = async (url: string) => {
      const res = await api(sys, url, { token });
      if (res.body.data.length !== PER_PAGE) throw new Error(`${url}: short page`);
    };
    /** The same page read from the store alone: the service's keyset read at the cursor's position. */
    const viaStore = async (url: string) => {
      const params = new URL(url, 'http://bench').searchParams;
      const cursor = params.get('cursor');
      const after = cursor ? (JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()) as { p: string }).p : '';
      const sort = (params.get('sort') ?? '')
        .split(',')
        .filter(Boolean)
        .map((key) => ({ field: key.replace(/^-/, ''), descending: key.startsWith('-') }));
      const page = await readPage(
        sales.sales,
        SALES_PAGES,
        { equals: { tenant: [TENANT] } },
        { per_page: PER_PAGE, sort, after, backward: false },
      );
      if (page.records.length !== PER_PAGE) throw new Error(`${url}: short store page`);
    };
    const timed = async (fn: () => Promise<void>) => {
      const t0 = performance.now();
      await fn();
      return performance.now() - t0;
    };
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    /** The first and last SAMPLE full pages, timed alternately ROUNDS times: a machine busy with other work slows both ends alike. */
    const ends = async (urls: string[], read: (url: string) => Promise<void>) => {
      const first: number[] = [];
      const last: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < SAMPLE; i++) {
          first.push(await timed(() => read(urls[i]!)));
          last.push(await timed(() => read(urls[urls.length - SAMPLE + i]!)));
        }
      }
      return { first: median(first), last: median(last) };
    };

    const results = [];
    for (const [name, query] of [
      ['sort=id (primary key)', ''],
      ['sort=item_name,-sell_date (secondary index)', '&sort=item_name,-sell_date'],
    ] as const) {
      const { urls, records, ms } = await walk(query);
      results.push({ name, pages: urls.length, records, ms, gateway: await ends(urls, viaGateway), store: await ends(urls, viaStore) });
    }

    const scanStart = performance.now();
    let scanned = 0;
    for await (const _ of sales.sales.iterate({ tenant: TENANT }, { sort: [['_id', 1]] })) scanned++;
    const scanMs = performance.now() - scanStart;

    const ms = (value: number) => `${value.toFixed(0)} ms`.padStart(8);
    const ratio = (value: number) => value.toFixed(2).padStart(6);
    console.log(
      `time per page of ${PER_PAGE.toLocaleString('en-US')} at the start and at the end of the walk (median of the first and last ${SAMPLE} full pages, read alternately ${ROUNDS} times):`,
    );
    console.log(
      '  order                                          pages   gateway: first    last  last/first   store: first    last  last/first',
    );
    for (const r of results) {
      console.log(
        `  ${r.name.padEnd(45)} ${String(r.pages).padStart(6)}   ${ms(r.gateway.first)} ${ms(r.gateway.last)}  ${ratio(r.gateway.last / r.gateway.first)}       ${ms(r.store.first)} ${ms(r.store.last)}  ${ratio(r.store.last / r.store.first)}`,
      );
    }
    console.log('  goal: gateway last/first <= 1.2');
    console.log(
      `records/s, the whole walk through the gateway against a raw store scan (iterate in id order) of the same ${scanned.toLocaleString('en-US')} records:`,
    );
    for (const r of results)
      console.log(
        `  gateway ${r.name.padEnd(45)} ${rate(r.records, r.ms).padStart(10)}  (${(r.records / r.ms / (scanned / scanMs)).toFixed(2)} x raw)`,
      );
    console.log(`  raw store scan ${''.padEnd(38)} ${rate(scanned, scanMs).padStart(10)}`);
    const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024).toLocaleString('en-US')} MB`;
    const database = join(sys.dataDir, 'transactional', 'data.mdb');
    const size = existsSync(database) ? ` (the database file is ${mb(statSync(database).size)})` : '';
    console.log(
      `peak RSS of this process (all-in-one): ${mb(rssAfterLoad)} by the end of the load, ${mb(process.resourceUsage().maxRSS * 1024)} by the end of the reads;` +
        ` JS heap at most ${mb(peakHeap)}, buffers outside it at most ${mb(peakExternal)}; the rest is native: the LMDB map's pages${size}, V8's reserve, threads`,
    );
  } finally {
    clearInterval(sampler);
    await sys.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
