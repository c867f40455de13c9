import assert from 'node:assert/strict';
import {
  autocorrelations,
  centredMovingAverage,
  MAX_ACF_ONLY_SEASON,
  MIN_SEASONAL_STRENGTH,
  isSeasonal,
  reseasonalize,
  seasonalStrength,
  seasonalIndices,
  seasonallyAdjust,
  shrinkSeasonalIndices,
} from './seasonality';

const pattern = [0.8, 1.2, 1.5, 0.5];
const seasonalSeries = Array.from({ length: 24 }, (_, t) => 100 * pattern[t % 4]);

describe('forecast/seasonality', () => {
  it('autocorrelations match a hand computation', () => {
    // mean 2.5, deviations -1.5 -0.5 0.5 1.5, sum of squares 5
    const r = autocorrelations([1, 2, 3, 4], 2);
    assert.ok(Math.abs(r[0] - (0.75 - 0.25 + 0.75) / 5) < 1e-12);
    assert.ok(Math.abs(r[1] - (-0.75 - 0.75) / 5) < 1e-12);
    assert.deepEqual(autocorrelations([5, 5, 5], 2), [0, 0]);
  });

  it('detects a clear season and rejects noise, constants and short series', () => {
    assert.equal(isSeasonal(seasonalSeries, 4), true);
    let seed = 11;
    const noise = Array.from({ length: 60 }, () => (seed = (seed * 16807) % 2147483647) / 2147483647);
    assert.equal(isSeasonal(noise, 4), false);
    assert.equal(isSeasonal(new Array(40).fill(3), 4), false);
    assert.equal(isSeasonal(seasonalSeries.slice(0, 7), 4), false, 'shorter than two seasons');
    assert.equal(isSeasonal(seasonalSeries, 1), false);
  });

  it('finds a yearly season in three years of trending weekly data, which the autocorrelation test alone misses', () => {
    let seed = 7;
    const uniform = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const weekly = (amplitude: number) =>
      Array.from({ length: 156 }, (_, t) => (400 + 4 * t) * (1 + amplitude * Math.sin((2 * Math.PI * t) / 52)) * (0.9 + 0.2 * uniform()));
    const seasonal = weekly(0.3);
    assert.ok(seasonalStrength(seasonal, 52) >= MIN_SEASONAL_STRENGTH, `strength ${seasonalStrength(seasonal, 52)}`);
    assert.ok(52 > MAX_ACF_ONLY_SEASON);
    assert.equal(isSeasonal(seasonal, 52), true);
    const plain = weekly(0);
    assert.ok(seasonalStrength(plain, 52) < MIN_SEASONAL_STRENGTH, `strength ${seasonalStrength(plain, 52)}`);
    assert.equal(isSeasonal(plain, 52), false, 'a trend with noise has no season');
    assert.equal(seasonalStrength(seasonal.slice(0, 100), 52), 0, 'under two cycles');
  });

  it('centred moving average uses the 2x4 window for an even period', () => {
    const trend = centredMovingAverage([1, 2, 3, 4, 5, 6], 4);
    assert.ok(Number.isNaN(trend[0]) && Number.isNaN(trend[1]));
    assert.equal(trend[2], (0.5 * 1 + 2 + 3 + 4 + 0.5 * 5) / 4);
    assert.equal(trend[3], (0.5 * 2 + 3 + 4 + 5 + 0.5 * 6) / 4);
    assert.ok(Number.isNaN(trend[4]));
  });

  it('classical decomposition recovers multiplicative and additive indices', () => {
    const multiplicative = seasonalIndices(seasonalSeries, 4, 'multiplicative');
    multiplicative.forEach((v, j) => assert.ok(Math.abs(v - pattern[j]) < 1e-12));
    const additive = seasonalIndices(
      Array.from({ length: 12 }, (_, t) => [3, -1, -2][t % 3] + 10),
      3,
      'additive',
    );
    [3, -1, -2].forEach((v, j) => assert.ok(Math.abs(additive[j] - v) < 1e-12));
  });

  it('seasonal adjustment and reseasonalisation are inverse operations', () => {
    const adjustment = seasonallyAdjust(seasonalSeries, 4);
    assert.equal(adjustment.seasonal, true);
    assert.equal(adjustment.kind, 'multiplicative');
    adjustment.adjusted.forEach((v) => assert.ok(Math.abs(v - 100) < 1e-9));
    const future = reseasonalize([100, 100, 100, 100, 100], adjustment, seasonalSeries.length);
    future.forEach((v, j) => assert.ok(Math.abs(v - 100 * pattern[j % 4]) < 1e-9));
  });

  it('leaves a pure trend untouched even when the test fires on its autocorrelation', () => {
    const trend = Array.from({ length: 40 }, (_, t) => 10 + t);
    const adjustment = seasonallyAdjust(trend, 4);
    adjustment.indices.forEach((v) => assert.ok(Math.abs(v - 1) < 0.01));
  });

  it('uses additive decomposition when the data are not strictly positive', () => {
    const series = Array.from({ length: 24 }, (_, t) => [5, -5, 0, 0][t % 4]);
    const adjustment = seasonallyAdjust(series, 4);
    assert.equal(adjustment.kind, 'additive');
    assert.equal(adjustment.seasonal, true);
    adjustment.adjusted.forEach((v) => assert.ok(Math.abs(v) < 1e-12));
  });

  it('shrinks noisy seasonal indices towards neutral and keeps a clear season', () => {
    let seed = 192837465;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2;
    const clear = Array.from({ length: 48 }, (_, t) => 100 * pattern[t % 4] * (1 + 0.01 * noise()));
    const clearIndices = seasonalIndices(clear, 4, 'multiplicative');
    const keptClear = shrinkSeasonalIndices(clear, 4, 'multiplicative', clearIndices);
    keptClear.forEach((v, j) => assert.ok(Math.abs(v - clearIndices[j]) < 0.01, `clear ${v} vs ${clearIndices[j]}`));
    // No season at all: the indices are noise, and shrinking must pull them towards 1.
    const flat = Array.from({ length: 48 }, () => 100 * (1 + 0.2 * noise()));
    const flatIndices = seasonalIndices(flat, 12, 'multiplicative');
    const shrunk = shrinkSeasonalIndices(flat, 12, 'multiplicative', flatIndices);
    const spread = (xs: number[]) => xs.reduce((a, v) => a + (v - 1) ** 2, 0);
    assert.ok(spread(shrunk) < 0.25 * spread(flatIndices), `${spread(shrunk)} vs ${spread(flatIndices)}`);
    const additive = shrinkSeasonalIndices(flat, 12, 'additive', seasonalIndices(flat, 12, 'additive'));
    assert.ok(Math.abs(additive.reduce((a, b) => a + b, 0)) < 1e-9, 'additive indices still sum to zero');
  });
});
