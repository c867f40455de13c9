import assert from 'node:assert/strict';
import {
  KPSS_CRITICAL,
  MIN_DRIFT_HISTORY,
  MIN_ROOT_MODULUS,
  airline,
  airlineFits,
  arima011Drift,
  autoArima,
  kpssStatistic,
  levelShiftsAsNoChange,
  minMaRootModulus,
} from './arima';
import { forecastSeries } from './forecast';

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

  it('KPSS tells a random walk from white noise', () => {
    let seed = 123456789;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2;
    const white = Array.from({ length: 120 }, () => noise());
    let level = 0;
    const walk = white.map((e) => (level += e));
    assert.ok(kpssStatistic(white) < KPSS_CRITICAL, `white noise ${kpssStatistic(white)}`);
    assert.ok(kpssStatistic(walk) > KPSS_CRITICAL, `random walk ${kpssStatistic(walk)}`);
  });

  it('automatic ARIMA differences a trend and continues it; keeps a stationary series around its mean', () => {
    let seed = 987654321;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2;
    const trend = Array.from({ length: 80 }, (_, t) => 100 + 3 * t + noise());
    const trended = autoArima(trend, 6);
    assert.ok(trended);
    assert.ok(trended.fit.d >= 1, `d ${trended.fit.d}`);
    trended.forecast.forEach((f, j) => assert.ok(Math.abs(f - (100 + 3 * (80 + j))) < 6, `step ${j + 1}: ${f}`));
    let x = 0;
    const ar = Array.from({ length: 200 }, () => (x = 0.3 * x + noise()) + 50);
    const stationary = autoArima(ar, 40);
    assert.ok(stationary);
    assert.equal(stationary.fit.d, 0);
    const mean = ar.reduce((a, b) => a + b, 0) / ar.length;
    assert.ok(Math.abs(stationary.forecast[39] - mean) < 0.5, `long-run ${stationary.forecast[39]} vs mean ${mean}`);
    assert.equal(autoArima([1, 2, 3], 2), null);
  });

  it('finds the smallest root of an MA polynomial, real or complex', () => {
    assert.equal(minMaRootModulus([]), Number.POSITIVE_INFINITY);
    assert.equal(minMaRootModulus([0.5]), 2);
    // 1 - 1.5z + 0.5z^2 = (1 - z)(1 - 0.5z): roots 1 and 2.
    assert.ok(Math.abs(minMaRootModulus([-1.5, 0.5]) - 1) < 1e-12);
    // 1 + 0.25z^2: roots +-2i.
    assert.ok(Math.abs(minMaRootModulus([0, 0.25]) - 2) < 1e-12);
  });

  it('discards a non-invertible MA fit instead of forecasting from it', () => {
    // 23 months of erratic sales: CSS once preferred ARMA(1,2) with MA roots inside the unit
    // circle and a mean of 36 on the log scale, and the forecast grew 2.5-fold a month.
    const sales = [2, 1, 7, 21, 1, 2, 5, 1, 7, 39, 2, 5, 18, 27, 8, 17, 4, 9, 1, 1, 43, 5, 9];
    const fit = autoArima(sales, 12);
    assert.ok(fit);
    assert.ok(minMaRootModulus(fit.fit.ma) >= MIN_ROOT_MODULUS, JSON.stringify(fit.fit));
    assert.ok(
      fit.forecast.every((f) => f > 0 && f < Math.max(...sales)),
      fit.forecast.join(','),
    );
  });

  it('fits ARIMA(0,1,1) with drift only to a history longer than its parameters plus four', () => {
    const growing = [1, 4, 3, 1, 1, 1, 2, 16, 12, 20];
    assert.equal(arima011Drift(growing.slice(0, MIN_DRIFT_HISTORY - 1), 6), null);
    assert.ok(arima011Drift(growing.slice(0, MIN_DRIFT_HISTORY), 6));
  });

  it('takes a jump for a level shift, not for a drift', () => {
    const jump = Float64Array.from([0, 0, 0.01, -0.01, 0, 4.6, 0, 0.01, 0, -0.01]);
    levelShiftsAsNoChange(jump);
    assert.equal(jump[5], 0, 'the jump is replaced by the median difference');
    assert.deepEqual(
      Array.from(jump).filter((_, t) => t !== 5),
      [0, 0, 0.01, -0.01, 0, 0, 0.01, 0, -0.01],
    );
    // Over half the differences equal (a count that creeps up by one now and then): nothing is a jump.
    const creeping = Float64Array.from([0, 0, 0.1, 0, 0, 0.09, 0, 0, 0.08, 0]);
    levelShiftsAsNoChange(creeping);
    assert.deepEqual(Array.from(creeping), [0, 0, 0.1, 0, 0, 0.09, 0, 0, 0.08, 0]);
    // A new customer: 10 a month for 30 months, then 1,000. The forecast stays near 1,000 (it was 2,500 a year out).
    const shifted = [...new Array<number>(30).fill(10), ...new Array<number>(10).fill(1000)];
    const forecast = forecastSeries(shifted, { horizon: 12, period: 12 }).forecast;
    assert.ok(
      forecast.every((v) => v >= 900 && v <= 1100),
      forecast.join(' '),
    );
    let state = 5;
    const noisy = shifted.map((v) => v * (1 + 0.04 * ((state = (state * 16807) % 2147483647) / 2147483647 - 0.5)));
    const arima = autoArima(noisy, 12)!.forecast;
    assert.ok(
      arima.every((v) => Math.abs(v - 1000) < 50),
      `no drift from the one jump: ${arima.join(' ')}`,
    );
    // A steady trend keeps its drift.
    const ramp = Array.from({ length: 30 }, (_, t) => 100 + 10 * t);
    assert.ok(arima011Drift(ramp, 6)!.drift > 0.02);
  });
});
