/**
 * Forecast accuracy, intervals and speed of the engine's `auto` next to classical
 * baselines computed in the same run, on:
 *  - the 1,428 monthly series of M3 (fit on all but the last 18 points, forecast 18),
 *  - the same M3 series as quarterly totals (fit on all but the last 8 quarters, forecast 8,
 *    as M3's own quarterly series are): real quarterly seasonality from the shared data,
 *  - the 5,000 RAF spare parts (intermittent and lumpy; fit 72 months, forecast 12),
 *  - each split into two halves by a hash of the series id (A and B), so a change
 *    tuned on one half can be checked on the other,
 *  - simulated series of each Syntetos-Boylan class and of other periodicities
 *    (seeded, so every run sees the same data),
 *  - when Rscript is present, R's own example series (yearly, quarterly, monthly), real data
 *    never tuned on, and the series of other installed R packages (econometric and financial
 *    data from lmtest, tseries, urca, AER, ...), which nothing was tuned on either.
 * Scores: sMAPE (0-200), MASE (seasonal naive scale; lag 1 for intermittent sets),
 * OWA against Naive2, RMSSE and bias (as ../shared/data/intermittent-baselines.mjs),
 * coverage of the 80% and 95% intervals and MSIS (M4, 95%), series per CPU-second.
 * When Rscript with the `forecast` package is present, R's ets, thetaf,
 * auto.arima, croston and the mean of ets/auto.arima/thetaf run on a sample of
 * each shared and simulated set and are printed beside the engine on the same sample.
 *
 *   npm run bench -- forecast
 *   env: M3_CSV, RAF_CSV (data files), BENCH_SAMPLE=k (every k-th series, for
 *   iteration), BENCH_SETS=m3,m3q,raf,rdata,rmore,sim (which sets; rdata: R's own example series, rmore: other R packages' series, see rDataSets), BENCH_R_SERIES=n (R on about n
 *   evenly spaced series per shared set; default 200), BENCH_R_SIM_SERIES=n (R on about n series
 *   of each simulated set; default 100), BENCH_R_SIM=0 (R on the shared sets only), BENCH_R=0 (skip R), BENCH_FAST=1 (skip the slow ets
 *   baseline), BENCH_SIM_COUNT=n (series per simulated set; default 200), BENCH_SIM_SETS=erratic,quarterly
 *   (only the simulated sets whose names contain one of these words), BENCH_R_PEERS=0 (no R forecasts, but
 *   the R example series still load), BENCH_MEMBERS=1 (the engine's single models too), BENCH_PER_SERIES=1
 *   (each series' MASE under every method of the R sample)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { forecastEngine } from '@supply/compute';
import { seededRandom, seedOf } from '@supply/kit';

type Algorithm = forecastEngine.Algorithm;
type SeriesForecast = forecastEngine.SeriesForecast;
const { expectedDemandConstraint, forecastSeries } = forecastEngine;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const GOALS = { m3Smape: 13.5, m3Owa: 0.8, coveragePoints: 3, seriesPerCpuSecond: 100, rafSes: 0.624, rafSba: 0.636, bias: 0.05 };

interface Series {
  id: string;
  history: number[];
  actual: number[];
}

interface DataSet {
  name: string;
  period: number;
  /** Intermittent sets use lag-1 MASE scale, as the intermittent literature does. */
  intermittent: boolean;
  series: Series[];
  /** Whether the M3 goals (sMAPE, OWA, coverage, speed) are checked on this set. */
  goals?: boolean;
}

function loadCsv(file: string): Series[] {
  const lines = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '');
  const header = lines[0].split(',').map((f) => f.trim());
  for (const column of ['series', 'h', 'values']) {
    if (!header.includes(column)) throw new Error(`${file}: missing column "${column}"`);
  }
  return lines.slice(1).map((line, i) => {
    const fields = line.split(',');
    const field = (name: string) => fields[header.indexOf(name)] ?? '';
    const values = field('values').trim().split(/\s+/).map(Number);
    const horizon = Number(field('h'));
    if (values.some((v) => !Number.isFinite(v)) || !(horizon > 0) || values.length <= horizon) {
      throw new Error(`${file}:${i + 2}: malformed series "${field('series')}"`);
    }
    return { id: field('series'), history: values.slice(0, -horizon), actual: values.slice(-horizon) };
  });
}

/** Quarters held out of each quarterly total series, M3's horizon for quarterly data. */
const QUARTERLY_HORIZON = 8;
/** Quarters of history a quarterly total series needs to be kept (three years). */
const QUARTERLY_MIN_HISTORY = 12;

/**
 * Monthly series as quarterly totals: three months summed, counted back from each series' end so
 * the last quarter is whole (a partial first quarter is dropped), the last QUARTERLY_HORIZON
 * quarters held out.
 */
function quarterlyTotals(series: readonly Series[]): Series[] {
  return series.flatMap((s) => {
    const months = [...s.history, ...s.actual];
    const quarters: number[] = [];
    for (let end = months.length; end >= 3; end -= 3) quarters.unshift(months[end - 3] + months[end - 2] + months[end - 1]);
    if (quarters.length < QUARTERLY_MIN_HISTORY + QUARTERLY_HORIZON) return [];
    return [{ id: `${s.id}-Q`, history: quarters.slice(0, -QUARTERLY_HORIZON), actual: quarters.slice(-QUARTERLY_HORIZON) }];
  });
}

// ---------- R's own example series ----------

/** R's base example data: the set no change was tuned on before forecast pooling. */
const R_BASE_PACKAGES = ['datasets', 'forecast'];
/**
 * More real data at every periodicity, never looked at while tuning: the example series of the
 * packages `forecast` depends on (lmtest, tseries, urca) and of econometrics packages Debian
 * installs beside it when present (AER with strucchange and sandwich, boot, MASS): quarterly and
 * yearly macroeconomic, financial and sales series. A series already in the base packages counts
 * there only.
 */
const R_MORE_PACKAGES = ['lmtest', 'tseries', 'urca', 'AER', 'strucchange', 'sandwich', 'boot', 'MASS'];

/**
 * Real series: every univariate yearly, quarterly and monthly series of the given R packages
 * (AirPassengers, UKgas, Nile, co2, gas, woolyrnq, the Seatbelts columns, ...; a matrix of
 * series counts each column; the decennial uspop would count as yearly, but is too short to hold
 * out 6). Each is scored from up to three forecast origins, h apart, as rolling-origin evaluations
 * do, with M3's horizons (6, 8, 18); histories keep their last R_DATA_MAX_HISTORY values.
 * Packages that are not installed are skipped and named.
 */
const R_DATA_SCRIPT = `
suppressMessages(library(forecast))
args <- commandArgs(trailingOnly = TRUE)
out <- file(args[1], "w")
emit <- function(pkg, name, x) {
  if (!is.numeric(x)) return()
  f <- frequency(x)
  if (f < 1) f <- 1
  # Binary indicator columns (Seatbelts' law) are not demand.
  if (!(f %in% c(1, 4, 12)) || anyNA(x) || any(!is.finite(x)) || length(unique(as.numeric(x))) < 3) return()
  writeLines(paste(pkg, name, f, paste(format(as.numeric(x), digits = 15, trim = TRUE), collapse = " "), sep = ","), out)
}
for (pkg in args[-1]) {
  if (!requireNamespace(pkg, quietly = TRUE)) { writeLines(paste("missing", pkg, sep = ","), out); next }
  for (item in data(package = pkg)$results[, "Item"]) {
    name <- sub(" .*", "", item)
    env <- new.env()
    x <- tryCatch(suppressWarnings({ data(list = name, package = pkg, envir = env); get(name, envir = env) }), error = function(e) NULL)
    if (!isTRUE(tryCatch(is.ts(x), error = function(e) FALSE))) next
    if (is.null(dim(x))) emit(pkg, name, x) else for (col in colnames(x)) emit(pkg, paste(name, col, sep = "."), x[, col])
  }
}
close(out)
`;

const R_DATA_MAX_HISTORY = 500;
const R_DATA_ORIGINS = 3;
const R_DATA_PERIODS = [
  [1, 'yearly'],
  [4, 'quarterly'],
  [12, 'monthly'],
] as const;

/** Whether `y` is `other` shifted by 1 to 12 periods either way (over at least 20 values in common). */
function isLagOf(y: readonly number[], other: readonly number[]): boolean {
  for (let lag = 1; lag <= 12; lag++) {
    for (const [a, b] of [
      [y, other],
      [other, y],
    ]) {
      // a[t] === b[t + lag] wherever both exist.
      const overlap = Math.min(a.length, b.length - lag);
      if (overlap < 20) continue;
      let same = true;
      for (let t = 0; t < overlap && same; t++) same = a[t] === b[t + lag];
      if (same) return true;
    }
  }
  return false;
}

/** R's example series: the base packages' sets (`rdata`), then the other packages' (`rmore`), each by periodicity. */
function rDataSets(which: { base: boolean; more: boolean }): DataSet[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-forecast-rdata-'));
  try {
    const output = path.join(dir, 'series.csv');
    writeFileSync(path.join(dir, 'series.R'), R_DATA_SCRIPT);
    execFileSync('Rscript', [path.join(dir, 'series.R'), output, ...R_BASE_PACKAGES, ...(which.more ? R_MORE_PACKAGES : [])], {
      stdio: 'inherit',
    });
    const groups = new Map<string, Series[]>();
    const seen = new Set<string>();
    const kept: number[][] = [];
    const missing: string[] = [];
    for (const line of readFileSync(output, 'utf8').trim().split('\n')) {
      const [pkg, name, frequency, values] = line.split(',');
      if (pkg === 'missing') {
        missing.push(name);
        continue;
      }
      // The same data under two names (UKDriverDeaths is Seatbelts' drivers column) counts once,
      // and so does a column that is another one lagged (lmtest's fyff.dy1 to dy6 are fyff.dy).
      if (seen.has(values)) continue;
      seen.add(values);
      const y = values.split(' ').map(Number);
      if (kept.some((other) => isLagOf(y, other))) continue;
      kept.push(y);
      const group = `${R_BASE_PACKAGES.includes(pkg) ? 'base' : 'more'} ${frequency}`;
      const period = Number(frequency);
      const horizon = period === 1 ? 6 : period === 4 ? 8 : 18;
      for (let o = 0; o < R_DATA_ORIGINS; o++) {
        const cut = y.length - horizon * (o + 1);
        if (cut < Math.max(3 * horizon, 2 * period + 2)) break;
        if (!groups.has(group)) groups.set(group, []);
        groups.get(group)!.push({
          id: `${pkg}::${name}@${cut}`,
          history: y.slice(Math.max(0, cut - R_DATA_MAX_HISTORY), cut),
          actual: y.slice(cut, cut + horizon),
        });
      }
    }
    if (missing.length > 0) console.log(`R example series: packages not installed, skipped: ${missing.join(', ')}`);
    const sets: DataSet[] = [];
    for (const [kind, label] of [
      ['base', 'R example series'],
      ['more', "R packages' series"],
    ] as const) {
      if (!which[kind]) continue;
      for (const [period, periodicity] of R_DATA_PERIODS) {
        const series = groups.get(`${kind} ${period}`) ?? [];
        if (series.length > 0) sets.push({ name: `${label}, ${periodicity}`, period, intermittent: false, series });
      }
    }
    return sets;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** FNV-1a of the id: a split that does not depend on file order. */
function half(id: string): 'A' | 'B' {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return hash % 2 === 0 ? 'A' : 'B';
}

// ---------- simulated series ----------

function normal(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

function poisson(next: () => number, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  let p = next();
  while (p > limit) {
    k++;
    p *= next();
  }
  return k;
}

type DemandClass = 'smooth' | 'erratic' | 'intermittent' | 'lumpy';

/** Monthly demand of one Syntetos-Boylan class; a fifth of the series drift in level or fade out. */
function demandSeries(next: () => number, demandClass: DemandClass, length: number): number[] {
  const occurrence = demandClass === 'smooth' || demandClass === 'erratic' ? 0.97 : 0.15 + 0.4 * next();
  const size = 2 + 40 * next();
  const variable = demandClass === 'erratic' || demandClass === 'lumpy';
  const drift = next() < 0.2 ? (next() < 0.5 ? -1 : 1) * (0.3 + 0.5 * next()) : 0;
  const seasonal = next() < 0.3 ? 0.3 * next() : 0;
  return Array.from({ length }, (_, t) => {
    const change = 1 + (drift * t) / length;
    const season = 1 + seasonal * Math.sin((2 * Math.PI * t) / 12);
    if (next() > Math.min(1, occurrence * Math.max(0.05, change))) return 0;
    const mean = size * season;
    const value = variable ? mean * Math.exp(1.1 * normal(next) - 0.6) : 1 + poisson(next, Math.max(0, mean * 0.3 - 1)) + mean * 0.7;
    return Math.max(1, Math.round(value));
  });
}

/** Trended, seasonal (when period > 1) positive series with multiplicative noise. */
function periodicSeries(next: () => number, period: number, length: number, noise: number): number[] {
  let level = 100 + 900 * next();
  const growth = (next() - 0.4) * 0.02 * (period > 1 ? 12 / Math.max(period, 12) : 3);
  const amplitude = period > 1 ? 0.1 + 0.4 * next() : 0;
  const phase = 2 * Math.PI * next();
  const values: number[] = [];
  for (let t = 0; t < length; t++) {
    level *= 1 + growth + 0.3 * noise * normal(next);
    const season = period > 1 ? 1 + amplitude * Math.sin((2 * Math.PI * t) / period + phase) : 1;
    values.push(Math.max(0, Math.round(level * season * (1 + noise * normal(next)))));
  }
  return values;
}

function simulate(name: string, count: number, horizon: number, make: (next: () => number, i: number) => number[]): Series[] {
  const next = seededRandom(seedOf(name));
  return Array.from({ length: count }, (_, i) => {
    const values = make(next, i);
    return { id: `${name}-${i}`, history: values.slice(0, -horizon), actual: values.slice(-horizon) };
  });
}

function simulatedSets(count: number): DataSet[] {
  const classes: DemandClass[] = ['smooth', 'erratic', 'intermittent', 'lumpy'];
  return [
    ...classes.map((c) => ({
      name: `sim ${c} (monthly)`,
      period: 12,
      intermittent: c === 'intermittent' || c === 'lumpy',
      series: simulate(c, count, 12, (next) => demandSeries(next, c, 48 + Math.floor(next() * 48))),
    })),
    {
      // New items: nothing sold for the first 20% to 70% of the history (before the launch), then
      // smooth or erratic demand (half each), at least 6 months of it before the 12 held out.
      name: 'sim launched (monthly)',
      period: 12,
      intermittent: false,
      series: simulate('launched', count, 12, (next, i) => {
        const length = 48 + Math.floor(next() * 48);
        const launch = Math.min(length - 18, Math.floor(length * (0.2 + 0.5 * next())));
        return [...new Array<number>(launch).fill(0), ...demandSeries(next, i % 2 === 0 ? 'smooth' : 'erratic', length - launch)];
      }),
    },
    {
      name: 'sim yearly',
      period: 1,
      intermittent: false,
      series: simulate('yearly', count, 6, (next) => periodicSeries(next, 1, 20 + Math.floor(next() * 25), 0.05)),
    },
    {
      name: 'sim quarterly',
      period: 4,
      intermittent: false,
      series: simulate('quarterly', count, 8, (next) => periodicSeries(next, 4, 24 + Math.floor(next() * 40), 0.06)),
    },
    {
      name: 'sim weekly',
      period: 52,
      intermittent: false,
      series: simulate('weekly', count, 13, (next) => periodicSeries(next, 52, 120 + Math.floor(next() * 100), 0.1)),
    },
    {
      name: 'sim daily (weekly season)',
      period: 7,
      intermittent: false,
      series: simulate('daily', count, 14, (next) => periodicSeries(next, 7, 90 + Math.floor(next() * 200), 0.12)),
    },
  ];
}

// ---------- methods and scores ----------

interface Run {
  forecasts: number[][];
  intervals: SeriesForecast['intervals'][] | null;
  models: string[];
  cpuSeconds: number;
}

/** SES with alpha 0.1 started at the first value, exactly the intermittent-set baseline. */
function fixedSes(values: readonly number[], horizon: number): number[] {
  let level = values[0] ?? 0;
  for (const v of values.slice(1)) level += 0.1 * (v - level);
  return new Array<number>(horizon).fill(level);
}

function cpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

function runEngine(set: DataSet, algorithm: Algorithm, withIntervals: boolean): Run {
  const run: Run = { forecasts: [], intervals: withIntervals ? [] : null, models: [], cpuSeconds: 0 };
  const started = cpuSeconds();
  for (const s of set.series) {
    const result = forecastSeries(s.history, {
      horizon: s.actual.length,
      period: set.period,
      algorithm,
      // The CLI's default: expected demand, or as fitted for a history below zero.
      constraint: expectedDemandConstraint(s.history),
      evaluate: withIntervals,
    });
    run.forecasts.push(result.forecast);
    run.intervals?.push(result.intervals);
    run.models.push(result.model);
  }
  run.cpuSeconds = cpuSeconds() - started;
  return run;
}

function runFunction(set: DataSet, f: (values: readonly number[], horizon: number) => number[]): Run {
  const started = cpuSeconds();
  const forecasts = set.series.map((s) => f(s.history, s.actual.length));
  return { forecasts, intervals: null, models: [], cpuSeconds: cpuSeconds() - started };
}

interface Score {
  smape: number;
  mase: number;
  rmsse: number;
  bias: number;
  coverage80: number;
  coverage95: number;
  msis: number;
  /** Coverage of the 80% and 95% intervals at each step ahead (1-based step = index + 1). */
  coverageByStep: { 80: number[]; 95: number[] };
}

function scaleOf(history: readonly number[], lag: number): { mae: number; mse: number } {
  const l = history.length > lag ? lag : 1;
  let mae = 0;
  let mse = 0;
  for (let t = l; t < history.length; t++) {
    const d = history[t] - history[t - l];
    mae += Math.abs(d);
    mse += d * d;
  }
  const n = Math.max(1, history.length - l);
  return { mae: mae / n, mse: mse / n };
}

function score(set: DataSet, run: Run, indices: readonly number[]): Score {
  const totals = { smape: 0, mase: 0, nMase: 0, rmsse: 0, nRmsse: 0, bias: 0, nBias: 0, in80: 0, in95: 0, points: 0, msis: 0, nMsis: 0 };
  const steps = { in80: [] as number[], in95: [] as number[], points: [] as number[] };
  for (const i of indices) {
    const s = set.series[i];
    const f = run.forecasts[i];
    const h = s.actual.length;
    const seasonalScale = scaleOf(s.history, set.intermittent ? 1 : set.period).mae;
    const lag1 = scaleOf(s.history, 1);
    const level = s.history.reduce((a, v) => a + Math.abs(v), 0) / s.history.length;
    let smape = 0;
    let ae = 0;
    let se = 0;
    let b = 0;
    for (let j = 0; j < h; j++) {
      const y = s.actual[j];
      const denominator = Math.abs(y) + Math.abs(f[j]);
      if (denominator > 0) smape += (200 * Math.abs(y - f[j])) / denominator;
      ae += Math.abs(y - f[j]);
      se += (y - f[j]) ** 2;
      b += f[j] - y;
    }
    totals.smape += smape / h;
    if (seasonalScale > 0) {
      totals.mase += ae / h / seasonalScale;
      totals.nMase++;
    }
    if (lag1.mse > 0) {
      totals.rmsse += Math.sqrt(se / h / lag1.mse);
      totals.nRmsse++;
    }
    if (level > 0) {
      totals.bias += b / h / level;
      totals.nBias++;
    }
    const intervals = run.intervals?.[i];
    if (intervals) {
      let msis = 0;
      for (let j = 0; j < h; j++) {
        const y = s.actual[j];
        const in80 = y >= intervals.lo80[j] && y <= intervals.hi80[j] ? 1 : 0;
        const in95 = y >= intervals.lo95[j] && y <= intervals.hi95[j] ? 1 : 0;
        totals.in80 += in80;
        totals.in95 += in95;
        totals.points++;
        steps.in80[j] = (steps.in80[j] ?? 0) + in80;
        steps.in95[j] = (steps.in95[j] ?? 0) + in95;
        steps.points[j] = (steps.points[j] ?? 0) + 1;
        const lo = intervals.lo95[j];
        const hi = intervals.hi95[j];
        msis += hi - lo + (2 / 0.05) * Math.max(0, lo - y) + (2 / 0.05) * Math.max(0, y - hi);
      }
      if (seasonalScale > 0) {
        totals.msis += msis / h / seasonalScale;
        totals.nMsis++;
      }
    }
  }
  const ratio = (a: number, n: number) => (n > 0 ? a / n : Number.NaN);
  return {
    smape: ratio(totals.smape, indices.length),
    mase: ratio(totals.mase, totals.nMase),
    rmsse: ratio(totals.rmsse, totals.nRmsse),
    bias: ratio(totals.bias, totals.nBias),
    coverage80: ratio(100 * totals.in80, totals.points),
    coverage95: ratio(100 * totals.in95, totals.points),
    msis: ratio(totals.msis, totals.nMsis),
    coverageByStep: {
      80: steps.points.map((n, j) => ratio(100 * steps.in80[j], n)),
      95: steps.points.map((n, j) => ratio(100 * steps.in95[j], n)),
    },
  };
}

function fmt(value: number, digits = 3, width = 7): string {
  return (Number.isFinite(value) ? value.toFixed(digits) : '-').padStart(width);
}

function printTable(title: string, set: DataSet, runs: Map<string, Run>, indices: readonly number[]): Map<string, Score> {
  const scores = new Map<string, Score>();
  for (const [name, run] of runs) scores.set(name, score(set, run, indices));
  const naive2 = scores.get('naive2');
  console.log(`\n${title}: ${indices.length} series`);
  console.log('method                    sMAPE    MASE     OWA   RMSSE    bias   cov80   cov95    MSIS  series/CPU-s');
  for (const [name, s] of scores) {
    const owa = naive2 ? (s.smape / naive2.smape + s.mase / naive2.mase) / 2 : Number.NaN;
    const run = runs.get(name) as Run;
    const speed = run.cpuSeconds > 0 ? set.series.length / run.cpuSeconds : Number.NaN;
    const bias = Number.isFinite(s.bias) ? `${s.bias >= 0 ? '+' : ''}${s.bias.toFixed(3)}` : '-';
    console.log(
      `${name.padEnd(22)} ${fmt(s.smape)} ${fmt(s.mase)} ${fmt(owa)} ${fmt(s.rmsse)} ${bias.padStart(7)} ${fmt(s.coverage80, 1)} ${fmt(s.coverage95, 1)} ${fmt(s.msis, 2)} ${fmt(speed, speed < 10 ? 2 : 0, 13)}`,
    );
  }
  // Coverage step by step: intervals too narrow far ahead can still average out to nominal.
  for (const [name, s] of scores) {
    for (const level of [80, 95] as const) {
      const bySteps = s.coverageByStep[level];
      if (bySteps.length > 1) console.log(`  ${name} cov${level} by step: ${bySteps.map((c) => c.toFixed(0)).join(' ')}`);
    }
  }
  return scores;
}

// ---------- R's forecast package ----------

const R_METHODS = ['R ets', 'R thetaf', 'R auto.arima', 'R croston', 'R mean(ets,arima,theta)'] as const;

/** R models whose own 80% and 95% intervals are scored beside the engine's. */
const R_WITH_INTERVALS = new Set<string>(['R ets', 'R auto.arima']);

// One line per series and method: index, method number (R_METHODS), the mean forecast, then for
// the models with intervals (forecast's own: analytic for ETS and ARIMA) lo80, hi80, lo95, hi95.
const R_SCRIPT = `
suppressMessages(library(forecast))
args <- commandArgs(trailingOnly = TRUE)
lines <- readLines(args[1])
out <- file(args[2], "w")
for (line in lines) {
  parts <- strsplit(line, ",")[[1]]
  m <- as.numeric(parts[2]); h <- as.integer(parts[3])
  y <- ts(as.numeric(strsplit(parts[4], " ")[[1]]), frequency = m)
  nas <- rep(NA, h)
  safe <- function(f) tryCatch(f(), error = function(e) NULL)
  bands <- function(fc) if (is.null(fc)) list(nas, nas, nas, nas, nas) else
    list(as.numeric(fc$mean), as.numeric(fc$lower[, 1]), as.numeric(fc$upper[, 1]), as.numeric(fc$lower[, 2]), as.numeric(fc$upper[, 2]))
  e <- bands(safe(function() forecast(ets(y), h = h, level = c(80, 95))))
  th <- safe(function() as.numeric(thetaf(y, h = h)$mean)); if (is.null(th)) th <- nas
  a <- bands(safe(function() forecast(auto.arima(y), h = h, level = c(80, 95))))
  cr <- safe(function() as.numeric(croston(y, h = h)$mean)); if (is.null(cr)) cr <- nas
  comb <- (e[[1]] + a[[1]] + th) / 3
  rows <- list(e, list(th), a, list(cr), list(comb))
  for (k in seq_along(rows)) writeLines(paste(parts[1], k - 1, paste(sapply(rows[[k]], function(v) paste(v, collapse = " ")), collapse = ";"), sep = ","), out)
}
close(out)
`;

function rAvailable(): boolean {
  if (process.env.BENCH_R === '0') return false;
  const probe = spawnSync('Rscript', ['-e', 'suppressMessages(library(forecast))'], { stdio: 'ignore' });
  return probe.status === 0;
}

/** R forecasts for the sampled series (indices into set.series), NaN where R failed. */
function runR(set: DataSet, sample: readonly number[]): Map<string, Run> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-forecast-r-'));
  try {
    const input = path.join(dir, 'in.csv');
    const output = path.join(dir, 'out.csv');
    writeFileSync(path.join(dir, 'bench.R'), R_SCRIPT);
    writeFileSync(
      input,
      sample.map((i) => `${i},${set.period},${set.series[i].actual.length},${set.series[i].history.join(' ')}`).join('\n') + '\n',
    );
    const started = Date.now();
    execFileSync('Rscript', [path.join(dir, 'bench.R'), input, output], { stdio: 'inherit' });
    const seconds = (Date.now() - started) / 1000;
    const runs = new Map<string, Run>(
      R_METHODS.map((m) => [
        m,
        {
          forecasts: set.series.map((s) => new Array<number>(s.actual.length).fill(Number.NaN)),
          intervals: R_WITH_INTERVALS.has(m) ? [] : null,
          models: [],
          cpuSeconds: 0,
        },
      ]),
    );
    const numbers = (text: string) => text.split(' ').map((v) => (v === 'NA' ? Number.NaN : Number(v)));
    for (const row of readFileSync(output, 'utf8').trim().split('\n')) {
      const [index, method, fields] = row.split(',');
      const run = runs.get(R_METHODS[Number(method)]) as Run;
      const [mean, lo80, hi80, lo95, hi95] = fields.split(';').map(numbers);
      run.forecasts[Number(index)] = mean;
      // A failed fit scores as missing points, not as an interval that never covers.
      if (run.intervals && hi95 && hi95.every(Number.isFinite)) run.intervals[Number(index)] = { lo80, hi80, lo95, hi95 };
    }
    // R's time covers all five methods together (wall clock, one process).
    for (const run of runs.values()) run.cpuSeconds = (seconds * set.series.length) / sample.length;
    return runs;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------- driver ----------

/** R's methods on about `target` evenly spaced series of the set, printed beside the engine's on the same series. */
function printRPeers(set: DataSet, runs: Map<string, Run>, all: readonly number[], target: number): void {
  const rEvery = Math.max(1, Math.ceil(all.length / target));
  const sample = all.filter((i) => i % rEvery === 0);
  const rRuns = runR(set, sample);
  const joint = new Map<string, Run>(
    [...runs].filter(([name]) =>
      ['auto', 'naive2', 'ses', 'theta', 'ets', 'croston-sba', 'ses (alpha 0.1)', ...ENGINE_MEMBERS].includes(name),
    ),
  );
  for (const [name, r] of rRuns) joint.set(name, r);
  printTable(`${set.name}, R sample (series/CPU-s for R: wall clock of all five R methods)`, set, joint, sample);
  if (process.env.BENCH_PER_SERIES === '1') {
    // MASE of each series under each method, to see where a set's mean comes from.
    const names = [...joint.keys()];
    console.log(`per series, MASE: ${names.join(' | ')}`);
    for (const i of sample) {
      const row = names.map((name) => fmt(score(set, joint.get(name) as Run, [i]).mase, 3, 6));
      console.log(`  ${set.series[i].id.padEnd(28)} ${row.join(' ')}`);
    }
  }
}

const ENGINE_MEMBERS = ['arima', 'damped', 'optimized_theta', 'holt_winters_multiplicative'] as const;

function baselines(set: DataSet): Map<string, Run> {
  const runs = new Map<string, Run>();
  runs.set('auto', runEngine(set, 'auto', true));
  runs.set('naive2', runEngine(set, 'naive2', false));
  runs.set('naive', runEngine(set, 'naive', false));
  if (set.period > 1) runs.set('seasonal_naive', runEngine(set, 'seasonal_naive', false));
  runs.set('ses', runEngine(set, 'ses', false));
  runs.set('theta', runEngine(set, 'theta', false));
  if (process.env.BENCH_FAST !== '1') runs.set('ets', runEngine(set, 'ets', false));
  // The engine's single models beside the selection (and beside R's on the R sample).
  if (process.env.BENCH_MEMBERS === '1') for (const m of ENGINE_MEMBERS) runs.set(m, runEngine(set, m, false));
  if (set.intermittent) {
    runs.set('ses (alpha 0.1)', runFunction(set, fixedSes));
    runs.set('croston-sba', runEngine(set, 'sba', false));
    runs.set(
      'zero',
      runFunction(set, (_, h) => new Array<number>(h).fill(0)),
    );
  }
  return runs;
}

function modelMix(run: Run): string {
  const counts = new Map<string, number>();
  for (const m of run.models) counts.set(m.replace(/\(.*\)/, ''), (counts.get(m.replace(/\(.*\)/, '')) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([m, c]) => `${m} ${c}`)
    .join(', ');
}

function sampled<T>(items: readonly T[], every: number): T[] {
  return every > 1 ? items.filter((_, i) => i % every === 0) : items.slice();
}

function goal(label: string, met: boolean, detail: string): void {
  console.log(`goal ${label}: ${met ? 'met' : 'NOT met'} (${detail})`);
}

export async function run(): Promise<void> {
  const every = Math.max(1, Number(process.env.BENCH_SAMPLE ?? 1));
  const sets = (process.env.BENCH_SETS ?? 'm3,m3q,raf,rdata,rmore,sim').split(',');
  const withR = rAvailable();
  const rTarget = Math.max(1, Number(process.env.BENCH_R_SERIES ?? 200));
  console.log(
    withR
      ? `R forecast package: present (R on about ${rTarget} evenly spaced series of each shared set)`
      : 'R forecast package: absent (Rscript or library(forecast) not found); R peers not printed',
  );

  const shared: DataSet[] = [];
  if (sets.includes('m3') || sets.includes('m3q')) {
    const m3 = sampled(loadCsv(process.env.M3_CSV ?? path.resolve(repoRoot, '../shared/data/m3-monthly.csv')), every);
    if (sets.includes('m3')) shared.push({ name: 'M3 monthly', period: 12, intermittent: false, series: m3, goals: true });
    if (sets.includes('m3q')) shared.push({ name: 'M3 as quarterly totals', period: 4, intermittent: false, series: quarterlyTotals(m3) });
  }
  if (sets.includes('rdata') || sets.includes('rmore')) {
    if (withR) shared.push(...rDataSets({ base: sets.includes('rdata'), more: sets.includes('rmore') }));
    else console.log("R example series: skipped (they are read from R's own packages, and Rscript is absent)");
  }
  if (sets.includes('raf')) {
    const file = process.env.RAF_CSV ?? path.resolve(repoRoot, '../shared/data/intermittent-raf.csv');
    shared.push({ name: 'RAF intermittent', period: 12, intermittent: true, series: sampled(loadCsv(file), every) });
  }
  for (const set of shared) {
    const runs = baselines(set);
    if (set.intermittent) {
      // What the service's default whole-unit constraint does to the same forecasts.
      const started = cpuSeconds();
      const whole = set.series.map((s) =>
        forecastSeries(s.history, { horizon: s.actual.length, period: set.period, constraint: 'integer' }),
      );
      runs.set('auto (whole units)', {
        forecasts: whole.map((r) => r.forecast),
        // Whole-unit bounds (floor and ceiling), as the API gives them for counts.
        intervals: whole.map((r) => r.intervals),
        models: [],
        cpuSeconds: cpuSeconds() - started,
      });
    }
    const all = set.series.map((_, i) => i);
    const scores = printTable(`${set.name}, all`, set, runs, all);
    for (const h of ['A', 'B'] as const)
      printTable(
        `${set.name}, half ${h}`,
        set,
        runs,
        all.filter((i) => half(set.series[i].id) === h),
      );
    console.log(`auto's models: ${modelMix(runs.get('auto') as Run)}`);
    if (withR && process.env.BENCH_R_PEERS !== '0') printRPeers(set, runs, all, rTarget);
    const auto = scores.get('auto') as Score;
    const speed = set.series.length / (runs.get('auto') as Run).cpuSeconds;
    if (set.intermittent) {
      goal(
        `RMSSE < SES ${GOALS.rafSes} and < Croston-SBA ${GOALS.rafSba}`,
        auto.rmsse < GOALS.rafSes && auto.rmsse < GOALS.rafSba,
        auto.rmsse.toFixed(3),
      );
      goal(`|bias| <= ${GOALS.bias}`, Math.abs(auto.bias) <= GOALS.bias, auto.bias.toFixed(3));
    } else if (set.goals) {
      const n2 = scores.get('naive2') as Score;
      const owa = (auto.smape / n2.smape + auto.mase / n2.mase) / 2;
      goal(`sMAPE <= ${GOALS.m3Smape}`, auto.smape <= GOALS.m3Smape, auto.smape.toFixed(3));
      goal(`OWA <= ${GOALS.m3Owa}`, owa <= GOALS.m3Owa, owa.toFixed(3));
      goal(
        `coverage within ${GOALS.coveragePoints} points of 80/95`,
        Math.abs(auto.coverage80 - 80) <= GOALS.coveragePoints && Math.abs(auto.coverage95 - 95) <= GOALS.coveragePoints,
        `${auto.coverage80.toFixed(1)} / ${auto.coverage95.toFixed(1)}`,
      );
      goal(`>= ${GOALS.seriesPerCpuSecond} series per CPU-second`, speed >= GOALS.seriesPerCpuSecond, speed.toFixed(0));
    }
  }

  if (sets.includes('sim')) {
    const count = Math.max(10, Math.round(Number(process.env.BENCH_SIM_COUNT ?? 200) / every));
    const rSimTarget = Math.max(1, Number(process.env.BENCH_R_SIM_SERIES ?? 100));
    const only = process.env.BENCH_SIM_SETS?.split(',').filter(Boolean);
    for (const set of simulatedSets(count).filter((s) => !only || only.some((word) => s.name.includes(word)))) {
      const runs = baselines(set);
      const all = set.series.map((_, i) => i);
      printTable(set.name, set, runs, all);
      console.log(`auto's models: ${modelMix(runs.get('auto') as Run)}`);
      if (withR && process.env.BENCH_R_SIM !== '0' && process.env.BENCH_R_PEERS !== '0') printRPeers(set, runs, all, rSimTarget);
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
