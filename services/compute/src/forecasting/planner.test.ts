import assert from 'node:assert/strict';
import { chunkSize, MAX_CHUNK_SERIES, planChunks, TARGET_CHUNKS } from './planner';
import type { SeriesRef } from './repository';

const series = (count: number): SeriesRef[] =>
  Array.from({ length: count }, (_, i) => ({
    item_customer_group_id: i + 1,
    item_id: 100 + i,
    item_name: `SKU-${i}`,
    customer_group_id: 1,
    customer_group_name: 'Retail',
  }));

describe('forecast chunk planner', () => {
  it('puts every series in exactly one chunk, in order, with the position of each chunk’s first series', () => {
    for (const count of [1, 7, 8, 9, 144, 399, 400, 401, 12_345]) {
      const chunks = planChunks(series(count));
      const flat = chunks.flatMap((c) => c.series.map((s) => s.item_customer_group_id));
      assert.deepEqual(
        flat,
        series(count).map((s) => s.item_customer_group_id),
        `count ${count}`,
      );
      chunks.forEach((c, seq) => {
        assert.equal(c.seq, seq);
        assert.equal(
          c.first_position,
          chunks.slice(0, seq).reduce((n, p) => n + p.series.length, 0),
        );
        assert.ok(c.series.length >= 1 && c.series.length <= MAX_CHUNK_SERIES);
      });
    }
  });

  it('fans a small run out to several workers and caps the chunk size of a large one', () => {
    assert.equal(planChunks(series(1)).length, 1);
    assert.equal(planChunks(series(5)).length, 5);
    assert.equal(planChunks(series(144)).length, TARGET_CHUNKS);
    assert.equal(chunkSize(144), 18);
    assert.equal(chunkSize(100_000), MAX_CHUNK_SERIES);
    assert.equal(planChunks(series(1000)).length, 20);
    assert.deepEqual(planChunks([]), []);
  });
});
