// Helpers the workflows E2E and fault tests share: sales rows, CSV bodies, multipart posts,
// polling a job to its end, and reading what the transactional service holds.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import type { Clients } from '@supply/kit';

const run = promisify(execFile);

/**
 * The bus these tests run on: RabbitMQ in a namespace of their own when AMQP_URL is set
 * (dropped again by `dropBusNamespace`), else the embedded bus.
 */
export function busEnv(): Record<string, string> {
  const url = process.env.AMQP_URL;
  return url ? { AMQP_URL: url, BUS_NAMESPACE: `wf-test-${randomBytes(4).toString('hex')}` } : {};
}

/**
 * Deletes what a test namespace left on the broker: every queue rabbitmqctl lists under it
 * (when it can run here), else the workflows queues, and the dead-letter exchange.
 */
export async function dropBusNamespace(env: Record<string, string>): Promise<void> {
  if (!env.AMQP_URL || !env.BUS_NAMESPACE) return;
  const prefix = `${env.BUS_NAMESPACE}.`;
  const listed = await run('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name']).then(
    ({ stdout }) =>
      stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((name) => name.startsWith(prefix)),
    () => ['workflows.sync-chunks', 'workflows.job-events'].flatMap((q) => [`${prefix}${q}`, `${prefix}${q}.dead`, `${prefix}${q}.retry`]),
  );
  const connection = await amqp.connect(env.AMQP_URL);
  // One channel per deletion: a refused one closes only its own channel.
  const attempt = async (work: (channel: amqp.Channel) => Promise<unknown>) => {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    await work(channel).catch(() => undefined);
    await channel.close().catch(() => undefined);
  };
  try {
    for (const name of listed) await attempt((channel) => channel.deleteQueue(name));
    await attempt((channel) => channel.deleteExchange(`${prefix}dead-letter`));
  } finally {
    await connection.close();
  }
}

export const FINISHED = ['succeeded', 'partially_succeeded', 'failed'];

export interface SalesRowInput {
  sale_type_name?: unknown;
  item_name?: unknown;
  customer_group_name?: unknown;
  sell_date?: unknown;
  timing_interval?: unknown;
  quantity?: unknown;
  uom?: unknown;
}

/** A valid History day row for `item` x `group` on `date`. */
export function salesRow(date: string, quantity: number, overrides: SalesRowInput & Record<string, unknown> = {}) {
  return {
    sale_type_name: 'History',
    item_name: 'SKU-0001',
    customer_group_name: 'Retail',
    sell_date: date,
    timing_interval: 'day',
    quantity,
    uom: 'ea',
    ...overrides,
  };
}

/** `count` consecutive days from `start` (YYYY-MM-DD). */
export function days(start: string, count: number): string[] {
  const t0 = Date.parse(`${start}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(t0 + i * 86_400_000).toISOString().slice(0, 10));
}

export const SALES_HEADER = 'sale_type_name,item_name,customer_group_name,sell_date,timing_interval,quantity,uom';

export function salesCsv(rows: Array<ReturnType<typeof salesRow>>, header = SALES_HEADER): string {
  const cell = (v: unknown) => {
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const fields = header.split(',');
  return `${header}\n${rows.map((r) => fields.map((f) => cell((r as Record<string, unknown>)[f])).join(',')).join('\n')}\n`;
}

/** POSTs multipart/form-data: `file` plus plain fields. */
export async function postFile(
  sys: { baseUrl: string },
  path: string,
  opts: { token: string; file?: string | Uint8Array; fields?: Record<string, string>; headers?: Record<string, string>; filename?: string },
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v);
  if (opts.file !== undefined) form.append('file', new Blob([opts.file as string], { type: 'text/csv' }), opts.filename ?? 'load.csv');
  const res = await fetch(`${sys.baseUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${opts.token}`, Accept: 'application/json', ...opts.headers },
    body: form,
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Reads a job as the token's user would, over the internal API (polling over HTTP would spend the token's rate limit). */
export async function readJob(sys: { clients: Clients }, tenant: string, token: string, id: number): Promise<any> {
  const principal = await sys.clients.tokens.authenticate({ token }, { context: { requestId: 'test', tenant } });
  const job = await sys.clients.workflows.getJob(
    { job_id: id },
    {
      context: {
        requestId: 'test',
        tenant,
        principal: {
          tenant,
          tokenId: principal.token_id,
          userId: principal.user_id,
          scopes: principal.scopes,
          isAdmin: principal.is_admin,
        },
      },
    },
  );
  return { ...job, job_id: job.id, message: job.message || null };
}

/** Polls the job until it has finished; returns it as GET /jobs/{id} shows it. */
export async function waitForJob(sys: { clients: Clients }, tenant: string, token: string, id: number, timeoutMs = 30_000): Promise<any> {
  const t0 = Date.now();
  for (;;) {
    const job = await readJob(sys, tenant, token, id);
    if (FINISHED.includes(job.status)) return job;
    if (Date.now() - t0 > timeoutMs) throw new Error(`job ${id} still ${job.status} after ${timeoutMs} ms: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every sales record of `tenant` matching the filter (names ignore case), through the transactional service. */
export async function salesRecords(
  clients: Clients,
  tenant: string,
  filter: {
    item_names?: string[];
    customer_group_names?: string[];
    sale_type_names?: string[];
    sell_date_from?: string;
    sell_date_to?: string;
  },
) {
  const out: Array<{
    id: number;
    item_name: string;
    customer_group_name: string;
    sale_type_name: string;
    sell_date: string;
    quantity: number;
    uom_abbr: string;
    created_at: string;
    updated_at: string;
  }> = [];
  let after = 0;
  for (;;) {
    const page = await clients.transactional.listSales(
      {
        after_id: after,
        limit: 10_000,
        filter: {
          item_names: filter.item_names ?? [],
          customer_group_names: filter.customer_group_names ?? [],
          sale_type_names: filter.sale_type_names ?? [],
          timing_intervals: [],
          sell_date_from: filter.sell_date_from ?? '',
          sell_date_to: filter.sell_date_to ?? '',
          item_customer_group_ids: [],
        },
      },
      { context: { requestId: 'test', tenant } },
    );
    out.push(...page.records);
    if (!page.has_more || page.records.length === 0) return out;
    after = page.records[page.records.length - 1]!.id;
  }
}

/** Inventory records of `tenant` at the given locations. */
export async function inventoryRecords(
  clients: Clients,
  tenant: string,
  filter: { location_names?: string[]; item_names?: string[]; inventory_date_from?: string; inventory_date_to?: string },
) {
  const out: Array<{
    id: number;
    item_name: string;
    location_name: string;
    bin_name: string;
    lot_name: string;
    inventory_date: string;
    quantity: number;
    uom_abbr: string;
  }> = [];
  let after = '';
  for (;;) {
    const page = await clients.transactional.queryInventory(
      {
        filter: {
          item_names: filter.item_names ?? [],
          location_names: filter.location_names ?? [],
          inventory_date_from: filter.inventory_date_from ?? '',
          inventory_date_to: filter.inventory_date_to ?? '',
        },
        page: { per_page: 5000, sort: [], after, backward: false },
      },
      { context: { requestId: 'test', tenant } },
    );
    out.push(...page.records);
    if (!page.page?.has_more) return out;
    after = page.page.last_position;
  }
}
