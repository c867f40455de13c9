import assert from 'node:assert/strict';
import { bucketsFromCalendar, bucketsPerYear, bucketsPerYearFromStarts } from './buckets';
import { PlanningInputError } from './validation';

describe('planning/buckets', () => {
  it('aligns weekly buckets to the week start on or before the start date', () => {
    // 2025-01-01 is a Wednesday.
    assert.deepEqual(bucketsFromCalendar({ start: '2025-01-01', bucket: 'week', count: 3 }), ['2024-12-30', '2025-01-06', '2025-01-13']);
    assert.deepEqual(bucketsFromCalendar({ start: '2025-01-01', bucket: 'week', count: 2, week_start: 'sunday' }), [
      '2024-12-29',
      '2025-01-05',
    ]);
    assert.deepEqual(bucketsFromCalendar({ start: '2025-01-05', bucket: 'week', count: 1, week_start: 'sunday' }), ['2025-01-05']);
  });

  it('builds 104 weekly buckets two years out', () => {
    const weeks = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 104 });
    assert.equal(weeks.length, 104);
    assert.equal(weeks[103], '2026-12-28');
    assert.equal(bucketsPerYearFromStarts(weeks), 52);
  });

  it('starts monthly buckets on the 1st and crosses year ends', () => {
    assert.deepEqual(bucketsFromCalendar({ start: new Date(Date.UTC(2025, 10, 17)), bucket: 'month', count: 3 }), [
      '2025-11-01',
      '2025-12-01',
      '2026-01-01',
    ]);
  });

  it('steps daily buckets through a leap day', () => {
    assert.deepEqual(bucketsFromCalendar({ start: '2024-02-28', bucket: 'day', count: 3 }), ['2024-02-28', '2024-02-29', '2024-03-01']);
  });

  it('derives buckets per year from the spacing of bucket starts', () => {
    assert.equal(bucketsPerYearFromStarts(bucketsFromCalendar({ start: '2025-01-01', bucket: 'month', count: 12 })), 12);
    assert.equal(bucketsPerYearFromStarts(bucketsFromCalendar({ start: '2025-01-01', bucket: 'day', count: 30 })), 365);
    assert.equal(bucketsPerYearFromStarts(['2025-01-06']), 52);
    assert.equal(bucketsPerYear('week'), 52);
    assert.equal(bucketsPerYear('month'), 12);
    assert.equal(bucketsPerYear('day'), 365);
  });

  it('rejects invalid calendars with the field at fault', () => {
    assert.throws(() => bucketsFromCalendar({ start: '2025-02-30', bucket: 'day', count: 1 }), {
      name: 'PlanningInputError',
      field: 'start',
    });
    assert.throws(() => bucketsFromCalendar({ start: '2025-01-01', bucket: 'week', count: 0 }), PlanningInputError);
    assert.throws(
      () => bucketsFromCalendar({ start: '2025-01-01', bucket: 'quarter' as 'week', count: 4 }),
      (e: unknown) => e instanceof PlanningInputError && e.field === 'bucket',
    );
    assert.throws(() => bucketsPerYearFromStarts(['2025-02-01', '2025-01-01']), PlanningInputError);
  });
});
