import assert from 'node:assert/strict';
import { ALGORITHMS, forecastSeries } from './index';
import { NORMAL_QUANTILE, errorShape, intervalMultipliers, predictionIntervals } from './intervals';
import { seasonallyAdjust } from './seasonality';

function noisy(length: number, seed: number, level = 50, spread = 10): number[] {
  let state = seed;
  const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
  return Array.from({ length }, () => Math.round(level + spread * (next() - 0.5)));
}

describe('forecast/intervals', () => {
  it('widens with the horizon and follows a multiplicative season', () => {
    const walk = [10, 12, 11, 15, 14, 18, 17, 21, 20, 24, 23, 27, 26, 30];
    const shape = errorShape(seasonallyAdjust(walk, 1, false));
    assert.ok(shape.sd(1, 0) > 0);
    assert.ok(shape.sd(6, 0) > shape.sd(1, 0), 'a later step has a larger spread');
    const seasonal = Array.from({ length: 48 }, (_, t) => [50, 100, 150, 100][t % 4] * (1 + 0.05 * ((t * 7) % 3)));
    const adjustment = seasonallyAdjust(seasonal, 4, true);
    const s = errorShape(adjustment);
    // Up to the level at each origin, which this level history barely moves.
    assert.ok(Math.abs(s.sd(1, 2) / s.sd(1, 0) / (adjustment.indices[2] / adjustment.indices[0]) - 1) < 1e-4);
  });

  it('keeps a constant spread for a level history and follows the level where the spread does', () => {
    const level = noisy(48, 3, 50, 20);
    const flat = errorShape(seasonallyAdjust(level, 1, false));
    assert.ok(Math.abs(flat.sd(1, 10) / flat.sd(1, 48) - 1) < 0.1, 'about one spread at every origin');
    // Sales of an item being phased out: 1,000 a month with 15% noise, then falling 20% a month.
    const phaseOut = Array.from({ length: 36 }, (_, t) =>
      Math.round((t < 18 ? 1000 : 1000 * 0.8 ** (t - 17)) * (0.85 + (0.3 * ((t * 7919) % 13)) / 13)),
    );
    const shape = errorShape(seasonallyAdjust(phaseOut, 1, false));
    assert.ok(shape.sd(1, 36) < shape.sd(1, 10) / 10, `spread at the end ${shape.sd(1, 36)}, at the start ${shape.sd(1, 10)}`);
    // Its safety stock is sized from recent sales (last 17), not from the 1,000 a month it once sold.
    const forecast = forecastSeries(phaseOut, { horizon: 6, period: 12 });
    assert.ok(forecast.intervals.hi95[0]! <= 3 * phaseOut[35]!, JSON.stringify(forecast.intervals.hi95));
    // A growing item's interval grows with it: 20% a month from 5 with 15% noise.
    const growth = Array.from({ length: 36 }, (_, t) => Math.round(5 * 1.2 ** t * (0.85 + (0.3 * ((t * 7919) % 13)) / 13)));
    const grown = forecastSeries(growth, { horizon: 6, period: 12 });
    assert.ok(grown.intervals.hi95[0]! - grown.forecast[0]! > 0.15 * grown.forecast[0]!, JSON.stringify(grown));
  });

  it("gives a single value a count's spread, not a certainty it cannot have", () => {
    const one = errorShape(seasonallyAdjust([25], 1, false));
    assert.equal(one.sd(1, 0), 5, 'sqrt of the level');
    const fromOne = forecastSeries([25], { horizon: 3, period: 1 });
    assert.ok(fromOne.intervals.hi80[0]! - fromOne.intervals.lo80[0]! > 10, JSON.stringify(fromOne.intervals));
    // A history that never moved keeps its narrow spread: that is what it shows.
    const constant = errorShape(seasonallyAdjust([25, 25, 25, 25, 25, 25], 1, false));
    assert.ok(constant.sd(1, 0) < 0.1);
  });

  it('uses normal quantiles without a holdout and the conformal quantile of scaled holdout errors otherwise', () => {
    const shape = { sd: () => 1 };
    assert.deepEqual(intervalMultipliers(shape, null), { 80: NORMAL_QUANTILE[80], 95: NORMAL_QUANTILE[95] });
    // 19 scaled errors 1..19: the 80% rank is ceil(20 * 0.8) = 16, the 95% rank ceil(20 * 0.95) = 19.
    const errors = Array.from({ length: 19 }, (_, k) => (k % 2 === 0 ? 1 : -1) * (k + 1));
    const wide = intervalMultipliers(shape, { cuts: [10], errors: [errors] });
    assert.deepEqual(wide, { 80: 16, 95: 19 });
    const small = intervalMultipliers(shape, { cuts: [10], errors: [errors.map((e) => e / 100)] });
    assert.equal(small[80], 0.16, 'the 80% multiplier is the conformal one');
    assert.equal(small[95], NORMAL_QUANTILE[95], 'the 95% multiplier is never narrower than normal');
  });

  it("pulls a continuous series' 80% multiplier towards the normal one by the holdout's size", () => {
    const shape = { sd: () => 1 };
    const errors = Array.from({ length: 19 }, (_, k) => k + 1);
    const pulled = intervalMultipliers(shape, { cuts: [10], errors: [errors] }, true);
    // The normal quantile counts as 8 of the 19 points' worth; the 95% multiplier keeps its own rule.
    assert.ok(Math.abs(pulled[80] - (19 * 16 + 8 * NORMAL_QUANTILE[80]) / 27) < 1e-12, String(pulled[80]));
    assert.equal(pulled[95], 19);
    // No jump where the conformal quantile takes over: 7 points give the normal multiplier, 8 one halfway.
    const seven = intervalMultipliers(shape, { cuts: [10], errors: [[3, 3, 3, 3, 3, 3, 3]] }, true);
    const eight = intervalMultipliers(shape, { cuts: [10], errors: [[3, 3, 3, 3, 3, 3, 3, 3]] }, true);
    assert.equal(seven[80], NORMAL_QUANTILE[80]);
    assert.ok(Math.abs(eight[80] - (3 + NORMAL_QUANTILE[80]) / 2) < 1e-12, String(eight[80]));
  });

  it('clips at zero for non-negative data and always contains the point forecast', () => {
    const shape = { sd: (step: number) => step };
    const intervals = predictionIntervals([1, 1, 1], 10, shape, { 80: 1, 95: 2 }, true);
    assert.deepEqual(intervals, { lo80: [0, 0, 0], hi80: [2, 3, 4], lo95: [0, 0, 0], hi95: [3, 5, 7] });
    const signed = predictionIntervals([1], 10, shape, { 80: 1, 95: 2 }, false);
    assert.deepEqual(signed.lo95, [-1]);
  });

  it('gives every algorithm nested intervals around its forecast, never negative for sales', () => {
    const values = noisy(40, 7, 6, 12).map((v) => Math.max(0, v));
    for (const algorithm of ALGORITHMS) {
      const r = forecastSeries(values, { horizon: 5, period: 12, algorithm });
      const { lo80, hi80, lo95, hi95 } = r.intervals;
      for (let j = 0; j < 5; j++) {
        assert.ok(0 <= lo95[j] && lo95[j] <= lo80[j] && lo80[j] <= r.forecast[j], `${algorithm} lower ${j}`);
        assert.ok(r.forecast[j] <= hi80[j] && hi80[j] <= hi95[j], `${algorithm} upper ${j}`);
      }
      assert.ok(hi95[4] > lo95[4], `${algorithm}: a noisy series has a spread`);
    }
  });

  it('covers most outcomes of a stationary noisy series', () => {
    let inside80 = 0;
    let inside95 = 0;
    let points = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const values = noisy(60, seed * 97, 100, 40);
      const r = forecastSeries(values.slice(0, 48), { horizon: 12, period: 12, constraint: 'none' });
      values.slice(48).forEach((y, j) => {
        if (y >= r.intervals.lo80[j] && y <= r.intervals.hi80[j]) inside80++;
        if (y >= r.intervals.lo95[j] && y <= r.intervals.hi95[j]) inside95++;
        points++;
      });
    }
    assert.ok(inside80 / points > 0.7 && inside80 / points < 0.95, `80%: ${inside80 / points}`);
    assert.ok(inside95 / points > 0.88, `95%: ${inside95 / points}`);
  });

  it('reports parameters and holdout accuracy of the chosen model', () => {
    const values = noisy(48, 3);
    const ses = forecastSeries(values, { horizon: 6, period: 12, algorithm: 'ses' });
    assert.ok(ses.parameters.alpha > 0 && ses.parameters.alpha < 1);
    assert.ok(ses.validation && ses.validation.mase !== null && ses.validation.mase > 0);
    assert.ok(ses.validation.rmsse !== null && ses.validation.rmsse > 0);
    assert.ok(ses.validation.bias !== null && Math.abs(ses.validation.bias) < 0.5);
    assert.equal(forecastSeries(values, { horizon: 6, period: 12, algorithm: 'ses', evaluate: false }).validation, null);
    assert.equal(forecastSeries([5], { horizon: 2, period: 12 }).validation, null, 'too short to hold out');
  });
});
