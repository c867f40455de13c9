import assert from 'node:assert/strict';
import { naive, naive2, seasonalNaive } from './naive';

describe('forecast/naive', () => {
  it('naive repeats the last value, zero for no history', () => {
    assert.deepEqual(naive([3, 9, 4], 3), [4, 4, 4]);
    assert.deepEqual(naive([], 2), [0, 0]);
  });

  it('seasonal naive repeats the last season', () => {
    assert.deepEqual(seasonalNaive([1, 2, 3, 4, 5, 6, 7, 8], 6, 4), [5, 6, 7, 8, 5, 6]);
    assert.deepEqual(seasonalNaive([1, 2, 3], 2, 4), [3, 3], 'shorter than a season');
  });

  it('Naive2 reseasonalises the last deseasonalised value', () => {
    const pattern = [0.5, 1.5, 1, 1];
    const values = Array.from({ length: 16 }, (_, t) => 10 * pattern[t % 4]);
    naive2(values, 4, 4).forEach((v, j) => assert.ok(Math.abs(v - 10 * pattern[j]) < 1e-9));
    assert.deepEqual(naive2([1, 2, 3, 4, 5], 2, 1), [5, 5], 'plain naive without a season');
  });
});
