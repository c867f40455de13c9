// Sales sync end to end: 1,000,000 rows through the HTTP API (CSV imports of 100,000 rows and
// JSON requests of 10,000, at most 4 jobs in flight), side by side with a raw bulk upsert
// of the same rows into the transactional store, in the same run. Peak heap is sampled
// during each run; the CSV path runs at two sizes to show it does not grow with the rows.
// `npm run bench -- workflows` or `npx tsx tests/bench/workflows.ts`
// (BENCH_ROWS=200000 for a shorter run).
import { pathToFileURL } from 'node:url';
import { openSales } from '@supply/transactional';
import { startSystem, type TestSystem } from '../support/system';
import { postFile, readJob } from '../e2e/workflows-support';

const TENANT = 'demo';
const ITEMS = Array.from({ length: 48 }, (_, i) => `SKU-${String(i + 1).padStart(4, '0')}`);
const GROUPS = ['Retail', 'Online', 'Wholesale'];
const PER_FILE = 100_000;
const PER_REQUEST = 10_000;
const IN_FLIGHT = 4;
const call = { context: { requestId: 'bench-workflows', tenant: TENANT }, deadlineMs: 300_000 };

/** Row i of a load starting at `year`: every item x group on consecutive days, each a new record. */
function row(i: number, year: number) {
  const combo = i % (ITEMS.length * GROUPS.length);
  const day = Math.floor(i / (ITEMS.length * GROUPS.length));
  const date = new Date(Date.UTC(year, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
  return { item: ITEMS[combo % ITEMS.length]!, group: GROUPS[Math.floor(combo / ITEMS.length)]!, date, quantity: (i % 89) + 0.5 };
}

const HEADER = 'sale_type_name,item_name,customer_group_name,sell_date,timing_interval,quantity,uom\n';
function csv(from: number, to: number, year: number): string {
  const lines: string[] = [];
  for (let i = from; i < to; i++) {
    const r = row(i, year);
    lines.push(`Forecast,${r.item},${r.group},${r.date},day,${r.quantity},ea`);
  }
  return `${HEADER}${lines.join('\n')}\n`;
}

function json(from: number, to: number, year: number) {
  const data = [];
  for (let i = from; i < to; i++) {
    const r = row(i, year);
    data.push({
      sale_type_name: 'Forecast',
      item_name: r.item,
      customer_group_name: r.group,
      sell_date: r.date,
      timing_interval: 'day',
      quantity: r.quantity,
      uom: 'ea',
    });
  }
  return { options: { continue_on_error: true }, data };
}

/** Peak heap used while `work` runs, sampled every 50 ms, above what was in use when it started. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; peakHeapMb: number; peakRssMb: number }> {
  const base = process.memoryUsage();
  let heap = base.heapUsed;
  let rss = base.rss;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    rss = Math.max(rss, m.rss);
  }, 50);
  const t0 = performance.now();
  try {
    const value = await work();
    return { value, ms: performance.now() - t0, peakHeapMb: (heap - base.heapUsed) / 2 ** 20, peakRssMb: rss / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

/** Submits loads through `submit`, keeping at most IN_FLIGHT jobs running, until all finished. */
async function pipeline(sys: TestSystem, token: string, parts: number, submit: (part: number) => Promise<number>): Promise<void> {
  const running: number[] = [];
  const waitOne = async () => {
    for (;;) {
      for (let i = 0; i < running.length; i++) {
        const job = await readJob(sys, TENANT, token, running[i]!);
        if (job.status === 'succeeded') {
          running.splice(i, 1);
          return;
        }
        if (job.status === 'failed' || job.status === 'partially_succeeded')
          throw new Error(`bench job ${job.id} ${job.status}: ${job.message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  for (let part = 0; part < parts; part++) {
    if (running.length >= IN_FLIGHT) await waitOne();
    running.push(await submit(part));
  }
  while (running.length > 0) await waitOne();
}

const rate = (rows: number, ms: number) => Math.round((rows / ms) * 1000);
const fmt = (n: number) => n.toLocaleString('en-US');

export async function run(): Promise<void> {
  const total = Number(process.env.BENCH_ROWS ?? 1_000_000);
  const small = Math.max(PER_FILE, Math.round(total / 10 / PER_FILE) * PER_FILE);
  const sys = await startSystem();
  try {
    await sys.clients.tokens.updateTenant({ slug: TENANT, rate_limit: 1_000_000, monthly_credits: 10_000_000 }, call);
    const token = await sys.tokenFor(TENANT, 'planner@demo.test', ['*']);

    const importCsv = (rows: number, year: number) =>
      measured(() =>
        pipeline(sys, token, Math.ceil(rows / PER_FILE), async (part) => {
          const file = csv(part * PER_FILE, Math.min(rows, (part + 1) * PER_FILE), year);
          const res = await postFile(sys, `/${TENANT}/api/v1/workflows/sync-sales/import`, {
            token,
            file,
            fields: { 'options[continue_on_error]': 'true' },
          });
          if (res.status !== 202) throw new Error(`import: ${res.status} ${res.text}`);
          return res.body.data[0].job_id as number;
        }),
      );
    const smallCsv = await importCsv(small, 2100);
    console.log(
      `CSV import   ${fmt(small).padStart(9)} rows: ${(smallCsv.ms / 1000).toFixed(1)} s  ${fmt(rate(small, smallCsv.ms))} rows/s  peak heap +${smallCsv.peakHeapMb.toFixed(0)} MB`,
    );
    const bigCsv = await importCsv(total, 2200);
    console.log(
      `CSV import   ${fmt(total).padStart(9)} rows: ${(bigCsv.ms / 1000).toFixed(1)} s  ${fmt(rate(total, bigCsv.ms))} rows/s  peak heap +${bigCsv.peakHeapMb.toFixed(0)} MB`,
    );

    const viaJson = await measured(() =>
      pipeline(sys, token, Math.ceil(total / PER_REQUEST), async (part) => {
        const body = JSON.stringify(json(part * PER_REQUEST, Math.min(total, (part + 1) * PER_REQUEST), 2400));
        const res = await fetch(`${sys.baseUrl}/${TENANT}/api/v1/workflows/sync-sales`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
          body,
        });
        const answer = (await res.json()) as { data: Array<{ job_id: number }> };
        if (res.status !== 202) throw new Error(`sync: ${res.status} ${JSON.stringify(answer)}`);
        return answer.data[0]!.job_id;
      }),
    );
    console.log(
      `JSON sync    ${fmt(total).padStart(9)} rows: ${(viaJson.ms / 1000).toFixed(1)} s  ${fmt(rate(total, viaJson.ms))} rows/s  peak heap +${viaJson.peakHeapMb.toFixed(0)} MB`,
    );

    // The same rows (as the transactional service stores them) straight into its collection by key.
    const sales = await openSales(await sys.proc.deps.openStore('transactional'));
    const now = new Date().toISOString();
    const raw = await measured(async () => {
      for (let from = 0; from < total; from += 1000) {
        const batch = [];
        for (let i = from; i < Math.min(total, from + 1000); i++) {
          const r = row(i, 2200);
          const itemId = ITEMS.indexOf(r.item) + 1;
          const groupId = GROUPS.indexOf(r.group) + 1;
          batch.push({
            key: {
              tenant: 'bench-raw',
              item_customer_group_id: itemId * 10 + groupId,
              sale_type_id: 2,
              timing_interval_id: 1,
              sell_date: r.date,
            },
            set: { quantity: r.quantity, uom_id: 1, uom_name: 'Each', uom_abbr: 'ea', load_id: 'raw', updated_at: now },
            setOnInsert: {
              item_id: itemId,
              item_name: r.item,
              item_name_lower: r.item.toLowerCase(),
              customer_group_id: groupId,
              customer_group_name: r.group,
              customer_group_name_lower: r.group.toLowerCase(),
              sale_type_name: 'Forecast',
              sale_type_name_lower: 'forecast',
              timing_interval_span: 'day',
              timing_interval_span_lower: 'day',
              created_at: now,
            },
          });
        }
        await sales.bulkUpsert(batch);
      }
    });
    console.log(
      `raw upsert   ${fmt(total).padStart(9)} rows: ${(raw.ms / 1000).toFixed(1)} s  ${fmt(rate(total, raw.ms))} rows/s  (store bulkUpsert by key, 1,000 a call)`,
    );
    console.log(
      `end to end / raw rows/s: CSV ${(raw.ms / bigCsv.ms).toFixed(2)}x, JSON ${(raw.ms / viaJson.ms).toFixed(2)}x (goal: at least 0.5x)`,
    );
    console.log(
      `peak heap above start: CSV ${fmt(small)} rows +${smallCsv.peakHeapMb.toFixed(0)} MB vs ${fmt(total)} rows +${bigCsv.peakHeapMb.toFixed(0)} MB; peak RSS ${bigCsv.peakRssMb.toFixed(0)} MB`,
    );
  } finally {
    await sys.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
