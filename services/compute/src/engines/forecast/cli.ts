/**
 * Batch forecasting from the command line:
 *
 *   npm run forecast -- --input history.csv --horizon 12 --freq month --output forecasts.csv
 *
 * Input is long CSV `unique_id,ds,y` (ds = YYYY-MM-DD, rows in any order, empty y =
 * missing); output is long CSV `unique_id,ds,yhat,model,lo80,hi80,lo95,hi95`, series
 * sorted by id, and a per-series summary CSV (model, class, holdout accuracy, parameters).
 */
import { createReadStream, createWriteStream, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { FREQUENCIES, type Frequency, isFrequency, parseIsoDate } from './calendar';
import { formatCsvField, formatQuantity, parseCsvLine } from './csv';
import { type DatedSeriesForecast, forecastDatedSeries } from './forecast';
import { ALGORITHMS, type Algorithm, isAlgorithm } from './methods';
import {
  CONSTRAINTS,
  type Constraint,
  type DatedValue,
  MISSING_IMPUTATIONS,
  type MissingImputation,
  expectedDemandConstraint,
  isConstraint,
  isMissingImputation,
} from './prepare';

const USAGE = `usage: forecast --input <history.csv|-> --horizon <n> --freq <${FREQUENCIES.join('|')}> --output <forecasts.csv|->
                [--algorithm <${ALGORITHMS.join('|')}>]
                [--missing-imputation <${MISSING_IMPUTATIONS.join('|')}>]
                [--constraint <${CONSTRAINTS.join('|')}>] (default non_negative; none for a series that goes below zero)
                [--summary <summary.csv|->] (default: beside a file output, <name>.summary.csv)

input:   CSV with header unique_id,ds,y (ds = YYYY-MM-DD; rows in any order; empty y = missing)
output:  CSV unique_id,ds,yhat,model,lo80,hi80,lo95,hi95 with future dates on the frequency grid
summary: CSV unique_id,model,series_class,mase,rmsse,bias,parameters (holdout accuracy on the series' own history)`;

/** Wrong arguments: exit code 2 with the usage text. */
class UsageError extends Error {}
/** Unreadable or malformed input: exit code 1. */
class InputError extends Error {}

interface CliOptions {
  input: string;
  output: string;
  horizon: number;
  frequency: Frequency;
  algorithm: Algorithm;
  missingImputation: MissingImputation;
  /** Undefined: expectedDemandConstraint of each series (non_negative, or none for a history below zero). */
  constraint: Constraint | undefined;
  /** Per-series summary target; null writes none. */
  summary: string | null;
}

/** `forecasts.csv` -> `forecasts.summary.csv`. */
export function defaultSummaryPath(output: string): string | null {
  if (output === '-') return null;
  return output.toLowerCase().endsWith('.csv') ? `${output.slice(0, -4)}.summary.csv` : `${output}.summary.csv`;
}

function parseOptions(argv: readonly string[]): CliOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        input: { type: 'string' },
        output: { type: 'string' },
        horizon: { type: 'string' },
        freq: { type: 'string' },
        algorithm: { type: 'string', default: 'auto' },
        'missing-imputation': { type: 'string', default: 'auto' },
        // No default here: expectedDemandConstraint picks one per series (rounding to whole units adds error on slow movers).
        constraint: { type: 'string' },
        summary: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  if (!v.input) throw new UsageError('missing --input');
  if (!v.output) throw new UsageError('missing --output');
  if (v.horizon === undefined) throw new UsageError('missing --horizon');
  if (!/^\d+$/.test(v.horizon) || Number(v.horizon) < 1 || Number(v.horizon) > 100_000) {
    throw new UsageError(`--horizon must be a whole number from 1 to 100000, got "${v.horizon}"`);
  }
  if (!v.freq) throw new UsageError('missing --freq');
  if (!isFrequency(v.freq)) throw new UsageError(`--freq must be one of ${FREQUENCIES.join(', ')}, got "${v.freq}"`);
  const algorithm = v.algorithm ?? 'auto';
  if (!isAlgorithm(algorithm)) throw new UsageError(`--algorithm must be one of ${ALGORITHMS.join(', ')}, got "${algorithm}"`);
  const missing = v['missing-imputation'] ?? 'auto';
  if (!isMissingImputation(missing)) {
    throw new UsageError(`--missing-imputation must be one of ${MISSING_IMPUTATIONS.join(', ')}, got "${missing}"`);
  }
  const constraint = v.constraint;
  if (v.summary === '-' && v.output === '-') throw new UsageError('--summary and --output cannot both be stdout');
  if (constraint !== undefined && !isConstraint(constraint))
    throw new UsageError(`--constraint must be one of ${CONSTRAINTS.join(', ')}, got "${constraint}"`);
  return {
    input: v.input,
    output: v.output,
    horizon: Number(v.horizon),
    frequency: v.freq,
    algorithm,
    missingImputation: missing,
    constraint,
    summary: v.summary ?? defaultSummaryPath(v.output),
  };
}

/** Streams the history file line by line into per-series point lists, validating every row. */
async function readHistory(input: string): Promise<Map<string, DatedValue[]>> {
  const stream = input === '-' ? process.stdin : createReadStream(input);
  const opened = new Promise<void>((resolve, reject) => {
    if (input === '-') resolve();
    stream.once('open', () => resolve());
    stream.once('error', (error: Error) => reject(new InputError(`cannot read ${input}: ${error.message}`)));
  });
  await opened;
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const series = new Map<string, DatedValue[]>();
  let columns: { id: number; ds: number; y: number; count: number } | null = null;
  let lineNumber = 0;
  const fail = (message: string): never => {
    lines.close();
    stream.destroy();
    throw new InputError(`${input === '-' ? 'stdin' : input}, line ${lineNumber}: ${message}`);
  };
  for await (const rawLine of lines) {
    lineNumber++;
    const line = lineNumber === 1 ? rawLine.replace(/^\uFEFF/, '') : rawLine;
    if (line.trim() === '') continue;
    let fields: string[];
    try {
      fields = parseCsvLine(line);
    } catch (error) {
      return fail((error as Error).message);
    }
    if (!columns) {
      const names = fields.map((f) => f.trim());
      const index = (name: string) => names.indexOf(name);
      const missing = ['unique_id', 'ds', 'y'].filter((name) => index(name) < 0);
      if (missing.length > 0) fail(`header must name the columns unique_id, ds, y (missing: ${missing.join(', ')})`);
      columns = { id: index('unique_id'), ds: index('ds'), y: index('y'), count: names.length };
      continue;
    }
    if (fields.length !== columns.count) fail(`expected ${columns.count} fields, found ${fields.length}`);
    const id = fields[columns.id];
    if (id === '') fail('empty unique_id');
    const ds = fields[columns.ds].trim();
    if (!parseIsoDate(ds)) fail(`invalid date "${ds}" in column ds (expected YYYY-MM-DD)`);
    const yText = fields[columns.y].trim();
    const y = yText === '' ? null : Number(yText);
    if (y !== null && !Number.isFinite(y)) fail(`invalid number "${yText}" in column y`);
    let points = series.get(id);
    if (!points) {
      points = [];
      series.set(id, points);
    }
    points.push({ date: ds, value: y });
  }
  if (!columns) throw new InputError(`${input}: empty file (expected the header unique_id,ds,y)`);
  return series;
}

/** Redraws a one-line bar on stderr at most ten times a second. */
function progressBar(total: number): { tick: (done: number) => void; end: () => void } {
  const width = 30;
  let last = 0;
  const draw = (done: number) => {
    const filled = total > 0 ? Math.round((width * done) / total) : width;
    process.stderr.write(`\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total} series`);
  };
  return {
    tick(done) {
      const now = Date.now();
      if (now - last >= 100 || done === total) {
        last = now;
        draw(done);
      }
    },
    end() {
      process.stderr.write('\n');
    },
  };
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}

async function run(options: CliOptions): Promise<void> {
  const history = await readHistory(options.input);
  const ids = [...history.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const toStdout = options.output === '-';
  // Written beside the target and renamed at the end, so a failed run leaves no half file.
  const temporary = `${options.output}.partial-${process.pid}`;
  const out: Writable = toStdout ? process.stdout : createWriteStream(temporary);
  const failed = new Promise<never>((_, reject) =>
    out.once('error', (error: Error) => reject(new InputError(`cannot write ${options.output}: ${error.message}`))),
  );
  failed.catch(() => undefined);
  const progress = process.stderr.isTTY ? progressBar(ids.length) : null;
  const summaryRows: string[] = [];
  const body = async () => {
    await write(out, 'unique_id,ds,yhat,model,lo80,hi80,lo95,hi95\n');
    let done = 0;
    for (const id of ids) {
      let result;
      try {
        result = forecastDatedSeries(history.get(id) as DatedValue[], {
          horizon: options.horizon,
          frequency: options.frequency,
          algorithm: options.algorithm,
          constraint: options.constraint ?? expectedDemandConstraint((history.get(id) as DatedValue[]).map((p) => p.value)),
          missingImputation: options.missingImputation,
        });
      } catch (error) {
        throw new InputError(`series "${id}": ${(error as Error).message}`);
      }
      const idField = formatCsvField(id);
      const model = formatCsvField(result.model);
      const { lo80, hi80, lo95, hi95 } = result.intervals;
      let chunk = '';
      for (let k = 0; k < result.forecast.length; k++) {
        const bounds = [lo80[k], hi80[k], lo95[k], hi95[k]].map(formatQuantity).join(',');
        chunk += `${idField},${result.dates[k]},${formatQuantity(result.forecast[k])},${model},${bounds}\n`;
      }
      await write(out, chunk);
      summaryRows.push(summaryRow(id, result));
      progress?.tick(++done);
    }
    if (!toStdout) await new Promise<void>((resolve) => out.end(() => resolve()));
  };
  try {
    await Promise.race([body(), failed]);
    if (!toStdout) renameSync(temporary, options.output);
    if (options.summary !== null) writeSummary(options.summary, summaryRows);
  } catch (error) {
    if (!toStdout) {
      out.destroy();
      rmSync(temporary, { force: true });
    }
    throw error;
  } finally {
    progress?.end();
  }
}

const SUMMARY_HEADER = 'unique_id,model,series_class,mase,rmsse,bias,parameters\n';

function formatMetric(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : formatQuantity(Math.round(value * 1e4) / 1e4);
}

/** One summary line: the chosen model, demand class, holdout accuracy and parameters (`name=value;...`). */
function summaryRow(id: string, result: DatedSeriesForecast): string {
  const v = result.validation;
  const parameters = Object.entries(result.parameters)
    .map(([name, value]) => `${name}=${formatMetric(value)}`)
    .join(';');
  return [
    formatCsvField(id),
    formatCsvField(result.model),
    result.seriesClass,
    formatMetric(v?.mase),
    formatMetric(v?.rmsse),
    formatMetric(v?.bias),
    formatCsvField(parameters),
  ].join(',');
}

function writeSummary(target: string, rows: readonly string[]): void {
  const text = SUMMARY_HEADER + rows.map((r) => `${r}\n`).join('');
  if (target === '-') {
    process.stdout.write(text);
    return;
  }
  try {
    const temporary = `${target}.partial-${process.pid}`;
    writeFileSync(temporary, text);
    renameSync(temporary, target);
  } catch (error) {
    throw new InputError(`cannot write ${target}: ${(error as Error).message}`);
  }
}

/** Runs the CLI and returns the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const options = parseOptions(argv);
    if (options === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    await run(options);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`forecast: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof InputError) {
      process.stderr.write(`forecast: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`forecast: unexpected failure: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
