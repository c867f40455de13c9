/**
 * Planning engine throughput: 10,000 item-locations × 104 weekly buckets with seeded demand and
 * mixed lot rules, against a plain loop summing the same demand arrays (the memory-bound floor).
 * Single thread, so the rates are per core.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { mrpEngine } from '@supply/compute';

const { LOT_SIZING_RULES, SeededRandom, bucketsFromCalendar, planItemLocation } = mrpEngine;
type StandardPlanInput = mrpEngine.StandardPlanInput;

const ITEM_LOCATIONS = 10_000;
const BUCKETS = 104;
const ROUNDS = 9;

function generateItemLocations(seed: number): StandardPlanInput[] {
  const rng = new SeededRandom(seed);
  const periodStarts = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: BUCKETS });
  const inputs = new Array<StandardPlanInput>(ITEM_LOCATIONS);
  for (let i = 0; i < ITEM_LOCATIONS; i++) {
    const level = rng.range(1, 500);
    const seasonality = rng.range(0, 0.5);
    const intermittency = rng.chance(0.2) ? rng.range(0.3, 0.9) : 0;
    const gross = new Float64Array(BUCKETS);
    for (let t = 0; t < BUCKETS; t++) {
      const seasonal = 1 + seasonality * Math.sin((2 * Math.PI * t) / 52);
      gross[t] = rng.chance(intermittency) ? 0 : Math.round(level * seasonal * rng.range(0.5, 1.5));
    }
    let scheduled: Float64Array | undefined;
    if (rng.chance(0.5)) {
      scheduled = new Float64Array(BUCKETS);
      for (let t = 0; t < 4; t++) if (rng.chance(0.5)) scheduled[t] = Math.round(level * rng.range(1, 4));
    }
    inputs[i] = {
      period_starts: periodStarts,
      gross_requirements: gross,
      scheduled_receipts: scheduled,
      on_hand: Math.round(level * rng.range(0, 6)),
      supply_policy: rng.chance(0.2) ? 'constrained' : 'unconstrained',
      parameters: {
        lead_time: rng.int(0, 8),
        safety_stock: Math.round(level * rng.range(0, 2)),
        lot_sizing_rule: LOT_SIZING_RULES[i % LOT_SIZING_RULES.length],
        fixed_order_qty: Math.round(level * rng.range(1, 6)),
        ordering_cost: rng.range(20, 400),
        unit_cost: rng.range(1, 60),
        periods_of_supply: rng.chance(0.5) ? rng.int(1, 6) : undefined,
        min_order_qty: rng.chance(0.5) ? Math.round(level * rng.range(0, 3)) : undefined,
        order_multiple: rng.chance(0.5) ? rng.pick([6, 12, 24, 48]) : undefined,
        max_order_qty: rng.chance(0.3) ? Math.round(level * rng.range(2, 8)) : undefined,
      },
    };
  }
  return inputs;
}

/** The floor: touch every demand value once, nothing else. */
function sumDemand(inputs: readonly StandardPlanInput[]): number {
  let total = 0;
  for (let i = 0; i < inputs.length; i++) {
    const gross = inputs[i]!.gross_requirements as Float64Array;
    for (let t = 0; t < gross.length; t++) total += gross[t]!;
  }
  return total;
}

/** Plans every item-location; returns a checksum so the work cannot be optimised away. */
function planAll(inputs: readonly StandardPlanInput[]): number {
  let total = 0;
  for (let i = 0; i < inputs.length; i++) {
    const plan = planItemLocation(inputs[i]!);
    total += plan.projected_available[BUCKETS - 1]! + plan.planned_receipts[0]! + plan.exceptions.length;
  }
  return total;
}

/** Plans and reads every per-bucket series, including the ones derived on first read (net requirements, releases). */
function planAllWithSeries(inputs: readonly StandardPlanInput[]): number {
  let total = 0;
  for (let i = 0; i < inputs.length; i++) {
    const plan = planItemLocation(inputs[i]!);
    total += plan.projected_available[BUCKETS - 1]! + plan.net_requirements[0]! + plan.planned_releases[0]!;
  }
  return total;
}

/** Plans and materialises the JSON rows, as an API response would. */
function planAllWithRows(inputs: readonly StandardPlanInput[]): number {
  let total = 0;
  for (let i = 0; i < inputs.length; i++) total += planItemLocation(inputs[i]!).rows().length;
  return total;
}

/**
 * Hash of every result the engine produces (all per-bucket series bit for bit, receipt counts,
 * exceptions, past-due total), computed once outside the timed rounds: an optimisation that
 * changes any result changes this line.
 */
function resultDigest(inputs: readonly StandardPlanInput[]): string {
  const word = new Float64Array(1);
  const halves = new Uint32Array(word.buffer);
  let h = 0x811c9dc5;
  const mix = (value: number): void => {
    word[0] = value;
    h = Math.imul(h ^ halves[0]!, 0x01000193);
    h = Math.imul(h ^ halves[1]!, 0x01000193);
  };
  const series = (values: ArrayLike<number>): void => {
    for (let t = 0; t < values.length; t++) mix(values[t]!);
  };
  for (let i = 0; i < inputs.length; i++) {
    const plan = planItemLocation(inputs[i]!);
    series(plan.projected_available);
    series(plan.planned_receipts);
    series(plan.net_requirements);
    series(plan.planned_releases);
    if (plan.receipt_counts !== null) series(plan.receipt_counts);
    mix(plan.past_due_releases);
    mix(plan.exceptions.length);
    for (const e of plan.exceptions) {
      mix(e.type.length);
      mix(e.bucket);
      mix(e.quantity);
      mix(e.buckets_past_due ?? -1);
      mix(e.period_start === inputs[i]!.period_starts[e.bucket] ? 1 : 0);
    }
    mix(plan.plannedOrders().length);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

interface Measured {
  rate: number;
  checksum: number;
}

/**
 * Runs the workloads round-robin (one warm-up pass each, then `rounds` timed passes) so a noisy,
 * shared machine slows them alike; reports each one's median as item-location-buckets per second.
 * Time is process CPU time, not wall time: on a shared machine that is what "per core" means.
 */
function measureInterleaved(workloads: readonly (() => number)[], rounds: number): Measured[] {
  const checksums = workloads.map((work) => work());
  const times = workloads.map((): number[] => []);
  for (let r = 0; r < rounds; r++) {
    workloads.forEach((work, w) => {
      const start = process.cpuUsage();
      checksums[w]! += work();
      const used = process.cpuUsage(start);
      times[w]!.push((used.user + used.system) / 1000);
    });
  }
  return times.map((samples, w) => {
    samples.sort((a, b) => a - b);
    const medianMs = samples[Math.floor(samples.length / 2)]!;
    return { rate: (ITEM_LOCATIONS * BUCKETS) / (medianMs / 1000), checksum: checksums[w]! };
  });
}

function format(rate: number): string {
  return `${(rate / 1e6).toFixed(1).padStart(8)} M item-location-buckets/s`;
}

export async function run(): Promise<void> {
  const inputs = generateItemLocations(20250106);
  const [floor, engine, withSeries, withRows] = measureInterleaved(
    [() => sumDemand(inputs), () => planAll(inputs), () => planAllWithSeries(inputs), () => planAllWithRows(inputs)],
    ROUNDS,
  ) as [Measured, Measured, Measured, Measured];
  console.log(
    `planning: ${ITEM_LOCATIONS} item-locations × ${BUCKETS} weekly buckets, 1 thread (${availableParallelism()} cores available), median CPU time of ${ROUNDS} rounds`,
  );
  console.log(`  engine (planItemLocation)      ${format(engine.rate)}`);
  console.log(`  engine + every series           ${format(withSeries.rate)}`);
  console.log(`  engine + rows()                ${format(withRows.rate)}`);
  console.log(`  floor (sum demand arrays)      ${format(floor.rate)}`);
  console.log(`  floor / engine                 ${(floor.rate / engine.rate).toFixed(1).padStart(8)} ×   (goal <= 4)`);
  console.log(`  floor / engine + every series  ${(floor.rate / withSeries.rate).toFixed(1).padStart(8)} ×`);
  console.log(
    `  checksums ${engine.checksum.toFixed(0)} ${withSeries.checksum.toFixed(0)} ${floor.checksum.toFixed(0)} ${withRows.checksum}`,
  );
  console.log(`  results digest ${resultDigest(inputs)}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
