import assert from 'node:assert/strict';
import { fitSimpleSmoothing } from './ses';
import { fitDynamicTheta, linearSlope, optimizedTheta, standardTheta, thetaOnAdjusted } from './theta';

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
