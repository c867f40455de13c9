import assert from 'node:assert/strict';
import { bucketStarts } from './buckets';

describe('calendar bucket starts', () => {
  it('starts weeks on the calendar week_start on or before start_date', () => {
    // 2025-01-08 is a Wednesday.
    assert.deepEqual(bucketStarts({ bucket: 'week', week_start: 'monday', start_date: '2025-01-08' }, 3), [
      '2025-01-06',
      '2025-01-13',
      '2025-01-20',
    ]);
    assert.deepEqual(bucketStarts({ bucket: 'week', week_start: 'sunday', start_date: '2025-01-08' }, 2), ['2025-01-05', '2025-01-12']);
    assert.deepEqual(bucketStarts({ bucket: 'week', week_start: 'wednesday', start_date: '2025-01-08' }, 1), ['2025-01-08']);
  });

  it('starts months on the 1st across year ends and days on each day', () => {
    assert.deepEqual(bucketStarts({ bucket: 'month', week_start: 'monday', start_date: '2025-11-30' }, 3), [
      '2025-11-01',
      '2025-12-01',
      '2026-01-01',
    ]);
    assert.deepEqual(bucketStarts({ bucket: 'day', week_start: 'monday', start_date: '2024-02-28' }, 3), [
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
    ]);
  });
});
