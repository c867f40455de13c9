import assert from 'node:assert/strict';
import { applyEts, etsCandidates, etsFits, fitEts, forecastEts, selectEts } from './ets';

const close = (actual: readonly number[], expected: readonly number[], tolerance = 1e-9) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= tolerance, `[${i}] ${v} vs ${expected[i]}`));
};

describe('forecast/ets', () => {
  it('simple exponential smoothing with fixed alpha matches a hand computation', () => {
    // l1 = 3, l2 = 3 + 0.3 * 2 = 3.6, l3 = 3.6 + 0.3 * 5.4 = 5.22
    const model = applyEts([3, 5, 9], { error: 'A', trend: 'N', season: 'N' }, 1, { alpha: 0.3, level: 3 });
    close(forecastEts(model, 3), [5.22, 5.22, 5.22]);
  });

  it("Holt's linear method with fixed parameters matches a hand computation", () => {
    // t1: 11 -> level 11.5, slope 1 + 0.4 * 0.5 = 1.2; t2: 12.7 -> level 12.85, slope 1.26
    const model = applyEts([12, 13], { error: 'A', trend: 'A', season: 'N' }, 1, {
      alpha: 0.5,
      beta: 0.2,
      level: 10,
      slope: 1,
    });
    close(forecastEts(model, 2), [14.11, 15.37]);
  });

  it('damped trend forecasts add phi + phi^2 + ... of the slope', () => {
    const model = applyEts([], { error: 'A', trend: 'Ad', season: 'N' }, 1, { alpha: 0.5, beta: 0.1, phi: 0.9, level: 10, slope: 1 });
    close(forecastEts(model, 3), [10.9, 11.71, 12.439]);
  });

  it('additive seasonal updating matches a hand computation', () => {
    // t0: expect 9, no error; t1: expect 11, see 12 -> level 10.5, season 1.5
    const model = applyEts([9, 12], { error: 'A', trend: 'N', season: 'A' }, 2, {
      alpha: 0.5,
      gamma: 0.5,
      level: 10,
      season: [-1, 1],
    });
    close(forecastEts(model, 4), [9.5, 12, 9.5, 12]);
  });

  it('multiplicative error and additive error give the same point updates', () => {
    const values = [10, 12, 11, 13, 12];
    const parameters = { alpha: 0.4, beta: 0.1, level: 10, slope: 0.5 };
    const additive = applyEts(values, { error: 'A', trend: 'A', season: 'N' }, 1, parameters);
    const multiplicative = applyEts(values, { error: 'M', trend: 'A', season: 'N' }, 1, parameters);
    close(forecastEts(additive, 3), forecastEts(multiplicative, 3));
    assert.notEqual(additive.likelihood, multiplicative.likelihood);
  });

  it('follows R on data sufficiency and the restricted candidate set', () => {
    assert.equal(etsFits({ error: 'A', trend: 'N', season: 'N' }, 6, 1), false);
    assert.equal(etsFits({ error: 'A', trend: 'N', season: 'N' }, 7, 1), true);
    assert.equal(etsFits({ error: 'A', trend: 'A', season: 'A' }, 23, 12), false, 'under two seasons');
    assert.equal(etsFits({ error: 'A', trend: 'A', season: 'A' }, 24, 52), false, 'period beyond 24');
    const positive = Array.from({ length: 48 }, (_, t) => 10 + (t % 12));
    const specs = etsCandidates(positive, 12, true);
    assert.equal(specs.length, 15);
    assert.ok(!specs.some((s) => s.error === 'A' && s.season === 'M'));
    const withZero = [0, ...positive.slice(1)];
    assert.ok(etsCandidates(withZero, 12, true).every((s) => s.error === 'A' && s.season !== 'M'));
    assert.ok(etsCandidates(positive, 12, false).every((s) => s.season === 'N'));
  });

  it('fits a constant series to its constant', () => {
    const model = fitEts(new Array(20).fill(42), { error: 'A', trend: 'N', season: 'N' }, 1);
    assert.ok(model);
    close(forecastEts(model, 3), [42, 42, 42], 1e-6);
  });

  it('estimates a smoothing parameter close to the truth on a random walk plus noise', () => {
    // Deterministic pseudo-noise keeps the test reproducible.
    let seed = 7;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2;
    let level = 100;
    const values = Array.from({ length: 200 }, () => {
      level += noise();
      return level + noise();
    });
    const model = fitEts(values, { error: 'A', trend: 'N', season: 'N' }, 1);
    assert.ok(model && model.alpha > 0.2 && model.alpha < 0.9, `alpha ${model?.alpha}`);
  });

  it('AICc selection prefers a seasonal model on seasonal data and reproduces the season', () => {
    const season = [20, -10, 5, -15];
    const values = Array.from({ length: 40 }, (_, t) => 100 + season[t % 4] + ((t * 37) % 5) / 10);
    const model = selectEts(values, 4, etsCandidates(values, 4, true));
    assert.ok(model);
    assert.notEqual(model.spec.season, 'N');
    const forecast = forecastEts(model, 4);
    forecast.forEach((v, j) => assert.ok(Math.abs(v - (100 + season[j])) < 2, `${v} vs ${100 + season[j]}`));
    assert.ok(Number.isFinite(model.aicc));
  });

  it('returns null instead of fitting multiplicative models to non-positive data', () => {
    assert.equal(fitEts([1, 0, 2, 3, 1, 2, 3, 4, 5, 6], { error: 'M', trend: 'N', season: 'N' }, 1), null);
  });

  it('solves the initial states of additive non-seasonal models exactly: no other start fits better', () => {
    let seed = 11;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 4;
    const values = Array.from({ length: 60 }, (_, t) => 50 + 1.5 * t + noise());
    for (const trend of ['A', 'Ad'] as const) {
      const spec = { error: 'A', trend, season: 'N' } as const;
      const model = fitEts(values, spec, 1);
      assert.ok(model);
      const { alpha, beta, phi } = model;
      // At the fitted smoothing parameters, no start on a grid around the truth may fit better.
      for (const level of [45, 48, 50, 52, 55]) {
        for (const slope of [1, 1.3, 1.5, 1.7, 2]) {
          const other = applyEts(values, spec, 1, { alpha, beta, phi, level, slope });
          assert.ok(
            other.likelihood >= model.likelihood - 1e-6,
            `${trend} start ${level}/${slope}: ${other.likelihood} < ${model.likelihood}`,
          );
        }
      }
      const forecast = forecastEts(model, 3);
      assert.ok(Math.abs(forecast[0] - (50 + 1.5 * 60)) < 5, `${trend} forecast ${forecast[0]}`);
    }
  });
});
