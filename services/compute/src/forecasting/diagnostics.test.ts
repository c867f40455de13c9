import assert from 'node:assert/strict';
import { seriesFilter, summarizeAccuracy } from './diagnostics';
import { storedIntervals } from './worker';

describe('forecast run diagnostics', () => {
  it('summarizes validation accuracy over the series that have each measure', () => {
    const summary = summarizeAccuracy([
      { mase: 1, rmsse: 0.5, bias: 0.1 },
      { mase: 3, rmsse: null, bias: -0.3 },
      { mase: 0.5, rmsse: 1.5, bias: null },
      { mase: null, rmsse: null, bias: null },
    ]);
    assert.equal(summary.series, 4);
    assert.equal(summary.mean_mase, 1.5);
    assert.equal(summary.median_mase, 1);
    assert.equal(summary.mean_rmsse, 1);
    assert.ok(Math.abs(summary.mean_bias! - -0.1) < 1e-12);
    assert.deepEqual(summarizeAccuracy([]), { series: 0, mean_mase: null, median_mase: null, mean_rmsse: null, mean_bias: null });
  });

  it('keeps intervals at the stored decimals and always around the stored forecast', () => {
    const kept = storedIntervals([10, 0], { lo80: [8.123456, 0.2], hi80: [12.000049, 0.5], lo95: [6, -1], hi95: [14, 9.99999] });
    assert.deepEqual(kept, { forecast: [10, 0], lo80: [8.1235, 0], hi80: [12, 0.5], lo95: [6, -1], hi95: [14, 10] });
  });

  it('filters series case-insensitively on lower-cased keys; a model filter matches the model or its family', () => {
    assert.deepEqual(seriesFilter(7, undefined), { run_id: 7 });
    assert.deepEqual(
      seriesFilter(7, {
        item_names: ['SKU-1', ' sku-1 ', ''],
        customer_group_names: [],
        models: ['ETS'],
        series_classes: ['Lumpy'],
        statuses: [],
      }),
      {
        run_id: 7,
        'keys.item': { $in: ['sku-1'] },
        $or: [{ 'keys.model': { $in: ['ets'] } }, { 'keys.family': { $in: ['ets'] } }],
        series_class: { $in: ['lumpy'] },
      },
    );
  });
});
