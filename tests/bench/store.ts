// Store port benchmark, measured side by side in one run:
//  1. bulkUpsert throughput of sales-like rows (compound unique key) in chunks of 1,000:
//     the embedded store vs the MongoDB adapter when MONGODB_URL is set;
//  2. keyset page latency at depth 0 vs depth 1,000,000 on the embedded store (goal: ratio <= 1.2).
// `npm run bench -- store` or `npx tsx tests/bench/store.ts`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MongoClient } from 'mongodb';
import { openStore, type Collection, type Doc, type Filter, type Sort, type Store, type UpsertRow } from '@supply/kit';

const UPSERT_ROWS = 200_000;
const CHUNK = 1_000;
/** FerretDB's SQLite backend scans the collection for every upsert, so 200,000 rows would take hours there. */
const FERRETDB_UPSERT_ROWS = 2_000;
const KEYSET_DOCS = 1_005_000;
const DEEP = 1_000_000;
const LOAD_CHUNK = 10_000;
const REPEATS = 25;

interface SaleRow extends Doc {
  _id: number;
  tenant: string;
  item_id: number;
  customer_group_id: number;
  sale_type_id: number;
  sell_date: string;
  quantity: number;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

function dayString(day: number): string {
  return new Date(Date.UTC(2020, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
}

function saleRows(count: number, quantityOffset: number): Array<UpsertRow<SaleRow>> {
  return Array.from({ length: count }, (_, i) => ({
    key: {
      tenant: 'bench',
      item_id: i % 2_000,
      customer_group_id: Math.floor(i / 2_000) % 10,
      sale_type_id: 1,
      sell_date: dayString(Math.floor(i / 20_000)),
    },
    set: { quantity: i + quantityOffset },
  }));
}

async function salesCollection(store: Store): Promise<Collection<SaleRow>> {
  return store.collection<SaleRow>({
    name: 'bench_sales',
    autoIncrement: true,
    indexes: [
      {
        name: 'upsert_key',
        keys: [
          ['tenant', 1],
          ['item_id', 1],
          ['customer_group_id', 1],
          ['sale_type_id', 1],
          ['sell_date', 1],
        ],
        unique: true,
      },
    ],
  });
}

interface UpsertMeasure {
  adapter: string;
  pass: string;
  rows: number;
  seconds: number;
  counts: string;
}

async function upsertAll(sales: Collection<SaleRow>, rows: Array<UpsertRow<SaleRow>>): Promise<{ seconds: number; counts: string }> {
  const totals = { inserted: 0, updated: 0, unchanged: 0 };
  const started = performance.now();
  for (let offset = 0; offset < rows.length; offset += CHUNK) {
    const result = await sales.bulkUpsert(rows.slice(offset, offset + CHUNK));
    totals.inserted += result.inserted;
    totals.updated += result.updated;
    totals.unchanged += result.unchanged;
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, counts: `${fmt(totals.inserted)} ins / ${fmt(totals.updated)} upd / ${fmt(totals.unchanged)} same` };
}

async function measureUpserts(adapter: string, store: Store, count: number): Promise<UpsertMeasure[]> {
  const sales = await salesCollection(store);
  const measures: UpsertMeasure[] = [];
  const passes: Array<[string, Array<UpsertRow<SaleRow>>]> = [
    ['insert', saleRows(count, 0)],
    ['same rows again', saleRows(count, 0)],
    ['every row changed', saleRows(count, 1)],
  ];
  for (const [pass, rows] of passes) {
    const { seconds, counts } = await upsertAll(sales, rows);
    measures.push({ adapter, pass, rows: count, seconds, counts });
  }
  return measures;
}

async function isFerretDb(url: string): Promise<boolean> {
  const client = new MongoClient(url);
  try {
    const info = await client.db('admin').command({ buildInfo: 1 });
    return typeof info['ferretdbVersion'] === 'string';
  } finally {
    await client.close();
  }
}

async function dropMongoDatabase(url: string, database: string): Promise<void> {
  const client = new MongoClient(url);
  try {
    await client.db(`supply_${database}`).dropDatabase();
  } finally {
    await client.close();
  }
}

/** Median times of `a` and `b`, run alternately so both see the same machine load. */
async function pairedMedians(repeats: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number, number]> {
  for (let i = 0; i < 3; i++) {
    await a();
    await b();
  }
  const times: [number[], number[]] = [[], []];
  const timed = async (action: () => Promise<unknown>, into: number[]) => {
    const started = performance.now();
    await action();
    into.push(performance.now() - started);
  };
  for (let i = 0; i < repeats; i++) {
    await timed(a, times[0]);
    await timed(b, times[1]);
  }
  const median = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
  return [median(times[0]), median(times[1])];
}

interface PageQuery {
  label: string;
  limit: number;
  sort: Sort;
  at: (depth: number) => Filter;
  /** Offset pagination: the same page read with skip, for contrast. */
  skip?: boolean;
}

/** `_id` i (1-based) sits at depth i - 1 in both (sell_date, _id) and `_id` order: dates rise with ids. */
function keysetDoc(i: number): SaleRow {
  return {
    _id: i,
    tenant: 'bench',
    item_id: i % 5_000,
    customer_group_id: i % 10,
    sale_type_id: 1,
    sell_date: dayString(Math.floor((i - 1) / 2_000)),
    quantity: i % 97,
  };
}

async function measureKeyset(dataDir: string): Promise<void> {
  const store = await openStore({ database: 'bench_keyset', dataDir });
  try {
    const sales = await store.collection<SaleRow>({
      name: 'keyset_sales',
      indexes: [
        {
          name: 'tenant_id',
          keys: [
            ['tenant', 1],
            ['_id', 1],
          ],
        },
        {
          name: 'tenant_date',
          keys: [
            ['tenant', 1],
            ['sell_date', 1],
            ['_id', 1],
          ],
        },
      ],
    });
    const loadStarted = performance.now();
    for (let first = 1; first <= KEYSET_DOCS; first += LOAD_CHUNK) {
      const last = Math.min(first + LOAD_CHUNK - 1, KEYSET_DOCS);
      await sales.insertMany(Array.from({ length: last - first + 1 }, (_, i) => keysetDoc(first + i)));
    }
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    console.log(
      `keyset: loaded ${fmt(KEYSET_DOCS)} documents (2 secondary indexes) with insertMany of ${fmt(LOAD_CHUNK)} in ${loadSeconds.toFixed(1)} s (${fmt(KEYSET_DOCS / loadSeconds)} docs/s)`,
    );
    const queries: PageQuery[] = [];
    for (const limit of [5_000, 100]) {
      queries.push({
        label: `{tenant, _id > last} by _id, limit ${fmt(limit)}`,
        limit,
        sort: [['_id', 1]],
        at: (depth) => ({ tenant: 'bench', _id: { $gt: depth } }),
      });
      queries.push({
        label: `{tenant, (sell_date, _id) > last} $or, limit ${fmt(limit)}`,
        limit,
        sort: [
          ['sell_date', 1],
          ['_id', 1],
        ],
        // At depth 0 "last" is a document before the first one, so both depths run the same query shape.
        at: (depth) => {
          const last = keysetDoc(depth);
          return { tenant: 'bench', $or: [{ sell_date: { $gt: last.sell_date } }, { sell_date: last.sell_date, _id: { $gt: last._id } }] };
        },
      });
    }
    queries.push({
      label: 'offset paging {tenant} by _id, skip + limit 100',
      limit: 100,
      sort: [['_id', 1]],
      at: () => ({ tenant: 'bench' }),
      skip: true,
    });
    const rows: string[][] = [];
    for (const query of queries) {
      const page = (depth: number) => () =>
        sales.find(query.at(query.skip ? 0 : depth), { sort: query.sort, limit: query.limit, ...(query.skip ? { skip: depth } : {}) });
      const [shallow, deep] = [await page(0)(), await page(DEEP)()];
      if (shallow[0]?._id !== 1 || deep[0]?._id !== DEEP + 1 || deep.length !== query.limit) {
        throw new Error(`${query.label}: wrong page (first ids ${shallow[0]?._id}, ${deep[0]?._id}; ${deep.length} docs)`);
      }
      const [atZero, atDeep] = await pairedMedians(query.skip ? 3 : REPEATS, page(0), page(DEEP));
      rows.push([query.label, ms(atZero), ms(atDeep), (atDeep / atZero).toFixed(2)]);
    }
    printTable(['embedded page (median ms)', 'depth 0', `depth ${fmt(DEEP)}`, 'ratio'], rows);
  } finally {
    await store.close();
  }
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ');
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
  for (const row of rows) console.log(line(row));
}

export async function run(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-store-'));
  try {
    const measures: UpsertMeasure[] = [];
    const embedded = await openStore({ database: 'bench_upsert', dataDir });
    try {
      measures.push(...(await measureUpserts('embedded', embedded, UPSERT_ROWS)));
    } finally {
      await embedded.close();
    }
    const mongodbUrl = process.env.MONGODB_URL;
    let mongoNote = 'mongodb: skipped (MONGODB_URL not set)';
    if (mongodbUrl) {
      const ferretdb = await isFerretDb(mongodbUrl);
      const rows = ferretdb ? FERRETDB_UPSERT_ROWS : UPSERT_ROWS;
      const database = `bench_upsert_${process.pid}_${Date.now().toString(36)}`;
      const mongo = await openStore({ database, dataDir, mongodbUrl });
      try {
        measures.push(...(await measureUpserts(ferretdb ? 'mongodb (FerretDB)' : 'mongodb', mongo, rows)));
      } finally {
        await mongo.close();
        await dropMongoDatabase(mongodbUrl, database);
      }
      mongoNote = ferretdb
        ? `mongodb: the server is FerretDB (SQLite), whose upserts scan the collection; measured on ${fmt(rows)} rows, not representative of MongoDB`
        : `mongodb: ${mongodbUrl.replace(/\/\/[^@/]*@/, '//***@')}`;
    }
    console.log(`bulkUpsert: sales-like rows, 5-field unique key, chunks of ${fmt(CHUNK)}, autoIncrement ids`);
    printTable(
      ['adapter', 'pass', 'rows', 'seconds', 'rows/s', 'result'],
      measures.map((m) => [m.adapter, m.pass, fmt(m.rows), m.seconds.toFixed(2), fmt(m.rows / m.seconds), m.counts]),
    );
    console.log(mongoNote);
    console.log('');
    await measureKeyset(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  await run();
}
