import assert from 'node:assert/strict';
import { applyConstraint, imputeMissing, isIntegerHistory, resolveConstraint, toPeriodSeries, withoutIsolatedSpikes } from './prepare';

describe('forecast/prepare', () => {
  const gappy = [null, 2, null, null, 8, null];

  it('imputes missing periods in every mode', () => {
    assert.deepEqual(imputeMissing(gappy, 'auto'), [0, 2, 0, 0, 8, 0], 'auto means no sale');
    assert.deepEqual(imputeMissing(gappy, 'zero'), [0, 2, 0, 0, 8, 0]);
    assert.deepEqual(imputeMissing(gappy, 'linear'), [2, 2, 4, 6, 8, 8]);
    assert.deepEqual(imputeMissing(gappy, 'forward_fill'), [2, 2, 2, 2, 8, 8]);
    assert.deepEqual(imputeMissing(gappy, 'none'), [2, 8]);
    assert.deepEqual(imputeMissing([null, null], 'linear'), [0, 0]);
    assert.deepEqual(imputeMissing([1, 2, 3], 'linear'), [1, 2, 3]);
  });

  it('places dated values on the grid, in any order, summing within a period', () => {
    const series = toPeriodSeries(
      [
        { date: '2024-01-03', value: 1 },
        { date: '2024-01-01', value: 5 },
        { date: '2024-01-03', value: 2 },
        { date: '2024-01-05', value: null },
      ],
      'day',
    );
    assert.deepEqual(series.values, [5, null, 3, null, null]);
    assert.deepEqual(series.lastDate, { year: 2024, month: 1, day: 5 });
    const monthly = toPeriodSeries(
      [
        { date: '2024-01-15', value: 1 },
        { date: '2024-01-20', value: 1 },
        { date: '2024-04-02', value: 4 },
      ],
      'month',
    );
    assert.deepEqual(monthly.values, [2, null, null, 4]);
    const weekly = toPeriodSeries(
      [
        { date: '2024-01-03', value: 1 },
        { date: '2024-01-17', value: 2 },
      ],
      'week',
    );
    assert.deepEqual(weekly.values, [1, null, 2], 'weeks start on the first date');
    assert.throws(() => toPeriodSeries([{ date: '2024-02-30', value: 1 }], 'day'), /invalid date/);
  });

  it('applies forecast constraints', () => {
    const forecast = [-1, 0.4, 2.6];
    assert.deepEqual(applyConstraint(forecast, 'none', [1.5]), [-1, 0.4, 2.6]);
    assert.deepEqual(applyConstraint(forecast, 'non_negative', [1.5]), [0, 0.4, 2.6]);
    assert.deepEqual(applyConstraint(forecast, 'integer', [1.5]), [0, 0, 3]);
    assert.deepEqual(applyConstraint(forecast, 'auto', [1.5, 2]), [0, 0.4, 2.6], 'fractional history');
    assert.deepEqual(applyConstraint(forecast, 'auto', [1, 2]), [0, 0, 3], 'whole-unit history');
    assert.deepEqual(applyConstraint(forecast, 'auto', [-3, -2]), [-1, 0.4, 2.6], 'a history below zero stays signed');
    assert.deepEqual(applyConstraint(forecast, 'auto', [4, -1, 2]), [-1, 0.4, 2.6], 'net of returns');
    assert.deepEqual(applyConstraint(forecast, 'non_negative', [-3, -2]), [0, 0.4, 2.6], 'an explicit constraint holds');
    // Whole units whose running total passes the largest double (it was NaN from the third period on).
    assert.deepEqual(applyConstraint([1e308, 1e308, 1e308], 'integer', [1]), [1e308, 1e308, 1e308]);
  });

  it('resolves auto from the history', () => {
    assert.equal(resolveConstraint('auto', [1, 2]), 'integer');
    assert.equal(resolveConstraint('auto', [1.5, 2]), 'non_negative');
    assert.equal(resolveConstraint('auto', [0, -1]), 'none');
    assert.equal(resolveConstraint('integer', [-1.5]), 'integer');
  });

  it('integer rounding keeps the cumulative quantity over the horizon', () => {
    const rounded = applyConstraint(new Array<number>(10).fill(0.3), 'integer', []);
    assert.deepEqual(rounded, [0, 1, 0, 0, 1, 0, 0, 0, 1, 0]);
    assert.equal(
      rounded.reduce((a, b) => a + b, 0),
      3,
    );
    assert.deepEqual(applyConstraint([7, 7, 7], 'integer', []), [7, 7, 7]);
  });

  it('recognises whole-unit histories', () => {
    assert.equal(isIntegerHistory([1, 0, 5]), true);
    assert.equal(isIntegerHistory([1, 0.5]), false);
    assert.equal(isIntegerHistory([]), false);
  });
});

describe('forecast/prepare: isolated spikes', () => {
  let state = 11;
  const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
  const noisy = (length: number, level: number) => Array.from({ length }, () => Math.round(level * (0.8 + 0.4 * next())));

  it('replaces a data-entry error by the median around it, and only that value', () => {
    const history = noisy(40, 10);
    history[25] = 10_000;
    const { values, replaced } = withoutIsolatedSpikes(history, 12);
    assert.equal(replaced, 1);
    const around = [history[23], history[24], history[26], history[27]].sort((a, b) => a - b);
    assert.ok(Math.abs(values[25] - (around[1] + around[2]) / 2) < 1e-9, String(values[25]));
    values.forEach((v, t) => t === 25 || assert.equal(v, history[t]));
  });

  it('leaves a step up that stays, a spike in the last period, a period without sales and the season alone', () => {
    const shift = [...noisy(30, 10), 1_000, 1_000, 1_000, 1_000];
    assert.equal(withoutIsolatedSpikes(shift, 1).replaced, 0);
    const last = [...noisy(30, 10), 10_000];
    assert.equal(withoutIsolatedSpikes(last, 1).replaced, 0);
    const dip = noisy(30, 100);
    dip[12] = 0;
    assert.equal(withoutIsolatedSpikes(dip, 1).replaced, 0);
    // A straight line, rising or falling: its first value is not a dip below a one-sided median.
    const line = Array.from({ length: 30 }, (_, t) => 10 + 2 * t);
    assert.equal(withoutIsolatedSpikes(line, 12).replaced, 0);
    assert.equal(withoutIsolatedSpikes([...line].reverse(), 12).replaced, 0);
    // Four Decembers at 30 times the rest of the year: the season, not four errors.
    const christmas = Array.from({ length: 48 }, (_, t) => (t % 12 === 11 ? 3_000 : 100 + (t % 5)));
    assert.equal(withoutIsolatedSpikes(christmas, 12).replaced, 0);
  });

  it('replaces a value a hundred times below the rest (a decimal point in the wrong place), not a zero', () => {
    const history = noisy(48, 5_000);
    history[20] = 50;
    const { values, replaced } = withoutIsolatedSpikes(history, 12);
    assert.equal(replaced, 1);
    assert.ok(values[20] > 4_000, String(values[20]));
    history[20] = 0;
    assert.equal(withoutIsolatedSpikes(history, 12).replaced, 0);
  });

  it('leaves heavy-tailed demand alone: large values that come often are how the item sells', () => {
    const heavy = noisy(40, 10);
    for (const t of [3, 9, 15, 21, 27, 33]) heavy[t] = 5_000;
    assert.equal(withoutIsolatedSpikes(heavy, 1).replaced, 0);
    // Log-normal demand with a spread of 1.1 (simulated erratic demand).
    const lognormal = Array.from({ length: 60 }, () => {
      const z = Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
      return Math.round(20 * Math.exp(1.1 * z));
    });
    assert.equal(withoutIsolatedSpikes(lognormal, 12).replaced, 0);
  });

  it('works on the raw scale for a history below zero', () => {
    const signed = noisy(30, 10).map((v) => v - 10);
    signed[10] = 50_000;
    assert.equal(withoutIsolatedSpikes(signed, 1).replaced, 1);
  });
});
