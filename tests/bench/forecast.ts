/**
 * Forecast accuracy and speed on the 1,428 monthly series of M3: fit on all but
 * the last 18 points, forecast 18, score sMAPE (M3 definition, 0-200) and MASE
 * (scaled by in-sample seasonal naive MAE, m = 12). `auto` is compared with
 * baselines computed in the same run. Single-threaded, so series/s is per core.
 *
 *   npx tsx tests/bench/forecast.ts          (M3_CSV overrides the data file,
 *   BENCH_ALGORITHMS=auto,theta limits the methods)
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  ALGORITHMS,
  type Algorithm,
  forecastSeries,
  isAlgorithm,
  meanAbsoluteScaledError,
  symmetricMape,
} from '../../services/compute/src/forecast/index';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PERIOD = 12;
const GOAL_SMAPE = 13.85;
const GOAL_SERIES_PER_SECOND = 20;
const DEFAULT_ALGORITHMS: Algorithm[] = [
  'auto',
  'naive2',
  'seasonal_naive',
  'ses',
  'theta',
  'optimized_theta',
  'damped',
  'combination',
];

interface M3Series {
  id: string;
  history: number[];
  actual: number[];
}

async function loadSeries(file: string): Promise<M3Series[]> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  const series: M3Series[] = [];
  let header: string[] | null = null;
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    const fields = line.split(',');
    if (!header) {
      header = fields.map((f) => f.trim());
      for (const column of ['series', 'n', 'h', 'values']) {
        if (!header.includes(column)) throw new Error(`${file}: missing column "${column}"`);
      }
      continue;
    }
    const field = (name: string) => fields[(header as string[]).indexOf(name)] ?? '';
    const values = field('values').trim().split(/\s+/).map(Number);
    const horizon = Number(field('h'));
    if (values.some((v) => !Number.isFinite(v)) || !(horizon > 0) || values.length <= horizon) {
      throw new Error(`${file}:${lineNumber}: malformed series "${field('series')}"`);
    }
    series.push({
      id: field('series'),
      history: values.slice(0, values.length - horizon),
      actual: values.slice(values.length - horizon),
    });
  }
  return series;
}

interface Score {
  algorithm: Algorithm;
  smape: number;
  mase: number;
  seriesPerSecond: number;
}

function evaluate(series: readonly M3Series[], algorithm: Algorithm): Score {
  let smapeSum = 0;
  let maseSum = 0;
  let maseCount = 0;
  let elapsed = 0;
  for (const s of series) {
    const started = performance.now();
    const { forecast } = forecastSeries(s.history, {
      horizon: s.actual.length,
      period: PERIOD,
      algorithm,
      evaluate: false,
    });
    elapsed += performance.now() - started;
    smapeSum += symmetricMape(s.actual, forecast);
    const mase = meanAbsoluteScaledError(s.actual, forecast, s.history, PERIOD);
    if (mase !== null) {
      maseSum += mase;
      maseCount++;
    }
  }
  return {
    algorithm,
    smape: smapeSum / series.length,
    mase: maseCount > 0 ? maseSum / maseCount : Number.NaN,
    seriesPerSecond: series.length / (elapsed / 1000),
  };
}

function chosenAlgorithms(): Algorithm[] {
  const requested = process.env.BENCH_ALGORITHMS;
  if (!requested) return DEFAULT_ALGORITHMS;
  const names = requested.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!isAlgorithm(name)) throw new Error(`BENCH_ALGORITHMS: unknown "${name}" (known: ${ALGORITHMS.join(', ')})`);
  }
  return names as Algorithm[];
}

export async function run(): Promise<void> {
  const file = process.env.M3_CSV ?? path.resolve(repoRoot, '../shared/data/m3-monthly.csv');
  const series = await loadSeries(file);
  console.log(`M3 monthly: ${series.length} series from ${file}, horizon 18, single thread`);
  const scores = chosenAlgorithms().map((algorithm) => evaluate(series, algorithm));
  console.log('');
  console.log('algorithm            sMAPE    MASE   series/s');
  for (const s of scores) {
    console.log(
      `${s.algorithm.padEnd(18)} ${s.smape.toFixed(3).padStart(7)} ${s.mase.toFixed(3).padStart(7)} ${s.seriesPerSecond
        .toFixed(1)
        .padStart(10)}`,
    );
  }
  const auto = scores.find((s) => s.algorithm === 'auto');
  if (auto) {
    const accuracyMet = auto.smape <= GOAL_SMAPE;
    const speedMet = auto.seriesPerSecond >= GOAL_SERIES_PER_SECOND;
    console.log('');
    console.log(`goal sMAPE <= ${GOAL_SMAPE}: ${accuracyMet ? 'met' : 'NOT met'} (${auto.smape.toFixed(3)})`);
    console.log(
      `goal >= ${GOAL_SERIES_PER_SECOND} series/s per core: ${speedMet ? 'met' : 'NOT met'} (${auto.seriesPerSecond.toFixed(1)})`,
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
