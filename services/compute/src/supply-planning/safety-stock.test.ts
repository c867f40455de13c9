import assert from 'node:assert/strict';
import { periodSigma } from '../forecasting/latest';
import { normalQuantile, resolveSafetyStock, windowVariance, type SafetyStockInput, type SeriesUncertainty } from './safety-stock';

const close = (actual: number, expected: number, tolerance = 1e-6) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} != ${expected}`);
const WEEKS = ['2025-01-06', '2025-01-13', '2025-01-20', '2025-01-27', '2025-02-03', '2025-02-10'];
const weekly = (customer_group_id: number, sigma: number[], run_id = 1): SeriesUncertainty => ({
  customer_group_id,
  run_id,
  timing_interval: 'week',
  dates: WEEKS.slice(0, sigma.length),
  sigma,
});

describe('safety stock from forecast uncertainty', () => {
  it('takes the normal quantile of the service level', () => {
    close(normalQuantile(0.5), 0);
    close(normalQuantile(0.95), 1.6448536, 1e-6);
    close(normalQuantile(0.975), 1.959964, 1e-6);
    close(normalQuantile(0.01), -2.3263479, 1e-6);
    close(normalQuantile(0.999), 3.0902323, 1e-6);
    assert.throws(() => normalQuantile(1), RangeError);
    assert.throws(() => normalQuantile(0), RangeError);
  });

  it('reads sigma from the upper halves of the 80% and 95% intervals', () => {
    close(periodSigma(10, 10 + 1.2816 * 2, 10 + 1.96 * 2), 2);
    assert.equal(periodSigma(0, 0, 0), 0, 'a zero-width interval has no spread');
    assert.equal(periodSigma(5, 4, 4), 0, 'never negative');
  });

  it('sums the variances over the lead time from the plan start (square-root rule), repeating the last period beyond the forecast', () => {
    const s = weekly(1, [1, 2, 3, 4]);
    assert.equal(windowVariance(s, '2025-01-06', 'week', 2), 1 + 4);
    assert.equal(windowVariance(s, '2025-01-13', 'week', 2), 4 + 9, 'periods before the plan start are left out');
    assert.equal(windowVariance(s, '2025-01-06', 'week', 0), 1, 'lead time 0 still protects one bucket');
    assert.equal(windowVariance(s, '2025-01-06', 'week', 6), 1 + 4 + 9 + 16 + 16 + 16);
    assert.equal(windowVariance(s, '2025-06-02', 'week', 2), 32, 'a forecast ending before the plan repeats its last period');
    // A month bucket holds 365.25 / 12 / 7 = 4.348 weeks.
    close(windowVariance(s, '2025-01-06', 'month', 1)!, 1 + 4 + 9 + 16 + (365.25 / 12 / 7 - 4) * 16);
    assert.equal(windowVariance({ ...s, timing_interval: 'fortnight' }, '2025-01-06', 'week', 1), null);
  });

  const input = (overrides: Partial<SafetyStockInput> = {}): SafetyStockInput => ({
    fixed: 7,
    service_level: 0.95,
    lead_time: 2,
    bucket: 'week',
    plan_start: '2025-01-06',
    customer_group_ids: [1, 2],
    share: 1,
    series: [weekly(1, [3, 4], 5), weekly(2, [0, 0], 6), weekly(3, [100, 100], 6)],
    ...overrides,
  });

  it('sizes z x sigma over the lead time from the planned groups’ forecasts, scaled by the share', () => {
    const got = resolveSafetyStock(input());
    assert.equal(got.source, 'service_level');
    close(got.sigma_lead_time, 5, 1e-4);
    close(got.quantity, 1.6448536 * 5, 1e-4);
    assert.equal(got.series, 2, 'group 3 is not planned here');
    assert.deepEqual(got.forecast_run_ids, [5, 6]);
    close(resolveSafetyStock(input({ share: 0.5 })).quantity, 1.6448536 * 2.5, 1e-4);
    assert.ok(resolveSafetyStock(input({ service_level: 0.99 })).quantity > got.quantity, 'a higher service level keeps more');
    assert.ok(resolveSafetyStock(input({ lead_time: 1 })).quantity < got.quantity, 'a shorter lead time keeps less');
  });

  it('keeps the fixed quantity without a service level, and says why when no forecast interval applies', () => {
    assert.deepEqual(resolveSafetyStock(input({ service_level: 0 })), {
      source: 'fixed',
      quantity: 7,
      service_level: 0,
      z: 0,
      sigma_lead_time: 0,
      series: 0,
      forecast_run_ids: [],
      note: '',
    });
    const none = resolveSafetyStock(input({ series: [weekly(3, [1])] }));
    assert.equal(none.source, 'fixed');
    assert.equal(none.quantity, 7);
    assert.match(none.note, /No forecast with prediction intervals/);
  });
});
