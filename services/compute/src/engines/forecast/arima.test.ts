import assert from 'node:assert/strict';
import { airline, airlineFits, arima011Drift } from './arima';

describe('forecast/arima', () => {
  it('airline model continues a growing multiplicative season', () => {
    const season = [0.8, 1.0, 1.3, 0.9];
    const values = Array.from({ length: 24 }, (_, t) => 100 * Math.pow(1.02, t) * season[t % 4]);
    const result = airline(values, 4, 4);
    assert.ok(result);
    assert.equal(result.fit.logScale, true);
    result.forecast.forEach((f, j) => {
      const expected = 100 * Math.pow(1.02, 24 + j) * season[(24 + j) % 4];
      assert.ok(Math.abs(f / expected - 1) < 1e-6, `step ${j + 1}: ${f} vs ${expected}`);
    });
  });

  it('needs three seasons and a seasonal period', () => {
    assert.equal(airlineFits(13, 4), false);
    assert.equal(airlineFits(14, 4), true);
    assert.equal(airlineFits(100, 1), false);
    assert.equal(airline([1, 2, 3], 12, 2), null);
  });

  it('ARIMA(0,1,1) with drift follows a linear trend and handles zeros on the raw scale', () => {
    const result = arima011Drift([0, 2, 4, 6, 8, 10, 12, 14], 3);
    assert.ok(result);
    result.forecast.forEach((f, j) => assert.ok(Math.abs(f - (16 + 2 * j)) < 1e-3, `step ${j + 1}: ${f}`));
    assert.equal(arima011Drift([1, 2], 2), null);
  });
});
