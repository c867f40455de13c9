// Bulk name resolution: 100,000 item names resolved through the reference service's gRPC
// API in bounded calls (10,000 names each), side by side with a raw store read of the same
// names in the same run. `npm run bench -- reference` or `npx tsx tests/bench/reference.ts`.
import { pathToFileURL } from 'node:url';
import { findIn, ITEMS, type ItemRecord } from '@supply/reference';
import { startSystem } from '../support/system';

const TOTAL = 100_000;
const PER_CALL = 10_000;
const ROUNDS = 3;
const TENANT = 'demo';
const call = { context: { requestId: 'bench-reference', tenant: TENANT }, deadlineMs: 300_000 };

const chunks = <T>(all: T[], size: number) =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size));
const rate = (count: number, ms: number) => `${Math.round((count / ms) * 1000).toLocaleString('en-US')}/s`;

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function run(): Promise<void> {
  const sys = await startSystem();
  try {
    const names = Array.from({ length: TOTAL }, (_, i) => `BENCH-${String(i + 1).padStart(6, '0')}`);
    const createMs = await timed(async () => {
      for (const batch of chunks(names, PER_CALL)) {
        await sys.clients.reference.createItems(
          { array_body: true, records: batch.map((name) => ({ name, uom: 'ea', unit_cost: 1, unit_price: 2 })) },
          call,
        );
      }
    });
    console.log(
      `created ${TOTAL.toLocaleString('en-US')} items through CreateItems in ${PER_CALL.toLocaleString('en-US')}-item calls: ${(createMs / 1000).toFixed(1)} s (${rate(TOTAL, createMs)})`,
    );

    // Callers send names as their rows spell them: mixed case resolves all the same.
    const asked = names.map((n, i) => (i % 2 ? n.toLowerCase() : n));
    const items = await (await sys.proc.deps.openStore('reference')).collection<ItemRecord>(ITEMS);
    const viaGrpc = async () => {
      for (const chunk of chunks(asked, PER_CALL)) {
        const res = await sys.clients.reference.resolveNames(
          { items: chunk, customer_groups: [], sale_types: [], timing_intervals: [], uoms: [], locations: [] },
          call,
        );
        if (res.items!.unknown.length > 0) throw new Error(`unresolved: ${res.items!.unknown.slice(0, 3).join(', ')}`);
      }
    };
    const viaStore = async () => {
      for (const chunk of chunks(asked, PER_CALL)) {
        // The same index reads the service makes, without gRPC and without mapping names to ids.
        const found = await findIn(
          items,
          { tenant: TENANT },
          'name_lower',
          chunk.map((n) => n.toLowerCase()),
        );
        if (found.length !== chunk.length) throw new Error(`raw read found ${found.length} of ${chunk.length}`);
      }
    };
    // Alternating rounds, best of each: neither path pays for first use or for the other's garbage.
    let grpcMs = Infinity;
    let storeMs = Infinity;
    for (let round = 0; round < ROUNDS; round++) {
      grpcMs = Math.min(grpcMs, await timed(viaGrpc));
      storeMs = Math.min(storeMs, await timed(viaStore));
    }
    console.log(
      `resolve ${TOTAL.toLocaleString('en-US')} item names, ${TOTAL / PER_CALL} calls of ${PER_CALL.toLocaleString('en-US')} (best of ${ROUNDS}):`,
    );
    console.log(`  gRPC ResolveNames  ${(grpcMs / 1000).toFixed(2)} s  ${rate(TOTAL, grpcMs)}`);
    console.log(`  raw store read     ${(storeMs / 1000).toFixed(2)} s  ${rate(TOTAL, storeMs)}`);
    console.log(`  gRPC / raw time    ${(grpcMs / storeMs).toFixed(2)}x`);
  } finally {
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
