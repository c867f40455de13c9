import assert from 'node:assert/strict';
import { SEASONAL_PERIODS, addPeriods, formatIsoDate, futureDates, parseIsoDate, periodNumber } from './calendar';

const date = (text: string) => {
  const parsed = parseIsoDate(text);
  assert.ok(parsed, text);
  return parsed;
};

describe('forecast/calendar', () => {
  it('parses strict ISO dates and rejects impossible ones', () => {
    assert.deepEqual(parseIsoDate('2024-02-29'), { year: 2024, month: 2, day: 29 });
    for (const bad of ['2023-02-29', '2024-13-01', '2024-1-01', '24-01-01', '2024-01-01T00:00', '', '2024-04-31']) {
      assert.equal(parseIsoDate(bad), null, bad);
    }
    assert.equal(formatIsoDate(date('0099-03-04')), '0099-03-04');
  });

  it('uses the documented seasonal periods', () => {
    assert.deepEqual(SEASONAL_PERIODS, { day: 7, week: 52, month: 12, quarter: 4, year: 1 });
  });

  it('numbers periods consecutively for each frequency', () => {
    assert.equal(periodNumber(date('2024-03-01'), 'day') - periodNumber(date('2024-02-28'), 'day'), 2);
    assert.equal(periodNumber(date('2024-01-15'), 'week', periodNumber(date('2024-01-01'), 'day')), 2);
    assert.equal(periodNumber(date('2025-01-31'), 'month') - periodNumber(date('2024-12-01'), 'month'), 1);
    assert.equal(periodNumber(date('2024-06-30'), 'quarter') - periodNumber(date('2024-01-01'), 'quarter'), 1);
    assert.equal(periodNumber(date('2026-07-01'), 'year') - periodNumber(date('2024-12-31'), 'year'), 2);
  });

  it('adds periods, clamping month days and keeping month ends', () => {
    assert.equal(formatIsoDate(addPeriods(date('2024-12-30'), 'day', 3)), '2025-01-02');
    assert.equal(formatIsoDate(addPeriods(date('2024-02-26'), 'week', 1)), '2024-03-04');
    assert.equal(formatIsoDate(addPeriods(date('2024-01-30'), 'month', 1)), '2024-02-29');
    assert.equal(formatIsoDate(addPeriods(date('2024-01-30'), 'month', 2)), '2024-03-30');
    assert.equal(formatIsoDate(addPeriods(date('2024-02-29'), 'month', 1)), '2024-03-31', 'month end stays month end');
    assert.equal(formatIsoDate(addPeriods(date('2024-11-15'), 'quarter', 1)), '2025-02-15');
    assert.equal(formatIsoDate(addPeriods(date('2024-02-29'), 'year', 1)), '2025-02-28');
  });

  it('generates future dates after the last history date', () => {
    assert.deepEqual(futureDates(date('2024-10-01'), 'month', 4), ['2024-11-01', '2024-12-01', '2025-01-01', '2025-02-01']);
    assert.deepEqual(futureDates(date('2024-01-01'), 'day', 0), []);
  });
});
