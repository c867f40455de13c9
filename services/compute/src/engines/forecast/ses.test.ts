import assert from 'node:assert/strict';
import { fitSimpleSmoothing, smoothWithAlpha, smoothWithParameters } from './ses';

describe('forecast/ses', () => {
  it('runs SES with fixed alpha and initial level', () => {
    // l1 = 10, l2 = 11, l3 = 11
    assert.equal(smoothWithParameters([10, 12, 11], 0.5, 10), 11);
  });

  it('solves the initial level in closed form for a fixed alpha', () => {
    const values = [4, 7, 5, 6, 8, 7];
    const fit = smoothWithAlpha(values, 0.3);
    const sse = (l0: number) => {
      let level = l0;
      let sum = 0;
      for (const v of values) {
        sum += (v - level) ** 2;
        level += 0.3 * (v - level);
      }
      return sum;
    };
    assert.ok(Math.abs(fit.sse - sse(fit.initialLevel)) < 1e-9);
    assert.ok(sse(fit.initialLevel) <= sse(fit.initialLevel + 0.01));
    assert.ok(sse(fit.initialLevel) <= sse(fit.initialLevel - 0.01));
    assert.ok(Math.abs(fit.level - smoothWithParameters(values, 0.3, fit.initialLevel)) < 1e-12);
  });

  it('tracks a random walk with a large alpha and averages white noise with a small one', () => {
    assert.ok(fitSimpleSmoothing([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).alpha > 0.9);
    assert.ok(fitSimpleSmoothing([5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6]).alpha < 0.2);
  });

  it('handles empty and single-point histories', () => {
    assert.equal(fitSimpleSmoothing([]).level, 0);
    assert.equal(fitSimpleSmoothing([7]).level, 7);
  });
});
