import assert from 'node:assert/strict';
import { fitSimpleSmoothing } from './ses';
import { slopeShrinkage } from './statistics';
import { fitDynamicTheta, linearSlope, optimizedTheta, optimizedThetaOnAdjusted, standardTheta, thetaOnAdjusted } from './theta';

describe('forecast/theta', () => {
  it('computes the least-squares slope', () => {
    assert.equal(linearSlope([1, 3, 5, 7]), 2);
    assert.equal(linearSlope([4]), 0);
  });

  it('standard Theta is SES plus half the trend slope as drift (Hyndman-Billah form)', () => {
    const values = [10, 12, 11, 14, 13, 16, 15, 18];
    const fit = fitSimpleSmoothing(values);
    const b = linearSlope(values);
    const memory = (1 - (1 - fit.alpha) ** values.length) / fit.alpha;
    const expected = [0, 1, 2].map((j) => fit.level + (b / 2) * (j + memory));
    thetaOnAdjusted(values, 3).forEach((v, j) => assert.ok(Math.abs(v - expected[j]) < 1e-12));
  });

  it('shrinks the slope by how clearly the history shows it (positive-part James-Stein)', () => {
    // Exact line: nothing to shrink. Fewer than four values: no residual spread to judge by.
    assert.equal(slopeShrinkage([1, 3, 5, 7, 9]), 1);
    assert.equal(slopeShrinkage([1, 9, 2]), 1);
    // Residuals of mean 0 and orthogonal to time leave the slope as set: twice its standard
    // error (residual variance 8 / 6 over the spread of time), so 1 - 1/t^2 = 0.75.
    const residuals = [1, -1, -1, 1, 1, -1, -1, 1];
    let spread = 0;
    for (let t = 0; t < 8; t++) spread += (t - 3.5) ** 2;
    const slope = 2 * Math.sqrt(8 / 6 / spread);
    const values = residuals.map((r, t) => 10 + slope * (t - 3.5) + r);
    assert.ok(Math.abs(linearSlope(values) - slope) < 1e-12);
    assert.ok(Math.abs(slopeShrinkage(values) - 0.75) < 1e-12, String(slopeShrinkage(values)));
    // Noise around a level whose slope is within one standard error: no trend at all.
    const level = [48, 55, 47, 52, 44, 53, 50, 46, 55, 49, 51, 45, 54, 50, 53];
    assert.equal(slopeShrinkage(level), 0);
    assert.ok(linearSlope(level) > 0.1);
  });

  it('as a combination member, extrapolates no trend the history cannot tell from noise, and a clear one whole', () => {
    const level = [48, 55, 47, 52, 44, 53, 50, 46, 55, 49, 51, 45, 54, 50, 53];
    for (const member of [thetaOnAdjusted, optimizedThetaOnAdjusted]) {
      const shrunk = member(level, 12, true);
      assert.ok(
        shrunk.every((v) => Math.abs(v - shrunk[0]) < 1e-9),
        `${member.name}: ${shrunk.join(',')}`,
      );
    }
    // The method as published (and as `algorithm: theta` runs it) extrapolates half that slope.
    const published = thetaOnAdjusted(level, 12);
    assert.ok(Math.abs(published[11] - published[0] - (11 * linearSlope(level)) / 2) < 1e-9);
    const noise = [3, -2, 4, -5, 1, 0, -3, 2, 5, -4, 1, -1, 2, -2, 3];
    const trend = noise.map((e, t) => 100 + 10 * t + e);
    assert.ok(slopeShrinkage(trend) > 0.99);
    const shrunk = optimizedThetaOnAdjusted(trend, 6, true);
    const plain = optimizedThetaOnAdjusted(trend, 6);
    shrunk.forEach((v, j) => assert.ok(Math.abs(v - plain[j]) < 0.01 * plain[j], `${v} against ${plain[j]}`));
  });

  it('forecasts a constant series as that constant', () => {
    standardTheta(new Array(30).fill(5), 3, 12).forEach((v) => assert.ok(Math.abs(v - 5) < 1e-9));
    optimizedTheta(new Array(30).fill(5), 3, 12).forEach((v) => assert.ok(Math.abs(v - 5) < 1e-9));
  });

  it('reseasonalises with the season when the test finds one', () => {
    const pattern = [0.5, 1, 1.5, 1];
    const values = Array.from({ length: 24 }, (_, t) => 200 * pattern[t % 4]);
    standardTheta(values, 4, 4).forEach((v, j) => assert.ok(Math.abs(v - 200 * pattern[j]) < 1e-6));
    optimizedTheta(values, 4, 4).forEach((v, j) => assert.ok(Math.abs(v - 200 * pattern[j]) < 1e-6));
  });

  it('optimised Theta follows a clean linear trend more closely than the standard method', () => {
    const values = Array.from({ length: 40 }, (_, t) => 50 + 3 * t);
    const fit = fitDynamicTheta(values);
    assert.ok(fit.theta >= 1);
    const truth = [0, 1, 2, 3, 4].map((j) => 50 + 3 * (40 + j));
    const error = (f: number[]) => f.reduce((s, v, j) => s + Math.abs(v - truth[j]), 0);
    assert.ok(error(optimizedTheta(values, 5, 1)) < error(standardTheta(values, 5, 1)));
    assert.ok(error(optimizedTheta(values, 5, 1)) / 5 < 1, 'within one unit per step');
  });
});
