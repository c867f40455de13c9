import assert from 'node:assert/strict';
import { applyConstraint, imputeMissing, isIntegerHistory, resolveConstraint, toPeriodSeries } from './prepare';

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
