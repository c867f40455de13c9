import assert from 'node:assert/strict';
import { adida, averageDemandInterval, croston, sba, tsb } from './intermittent';

const near = (actual: number, expected: number, tolerance = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} vs ${expected}`);

describe('forecast/intermittent', () => {
  const demand = [0, 4, 0, 0, 2, 0, 6];

  it('Croston with alpha 0.5 matches a hand computation', () => {
    // sizes 4 -> 3 -> 4.5, intervals 2 -> 2.5 -> 2.25, rate 2
    assert.deepEqual(croston(demand, 3, { alpha: 0.5 }), [2, 2, 2]);
  });

  it('Croston with the default alpha 0.1 matches a hand computation', () => {
    // sizes 4 -> 3.8 -> 4.02, intervals 2 -> 2.1 -> 2.09
    croston(demand, 2).forEach((v) => near(v, 4.02 / 2.09));
  });

  it('SBA deflates Croston by (1 - alpha/2)', () => {
    assert.deepEqual(sba(demand, 2, { alpha: 0.5 }), [1.5, 1.5]);
  });

  it('TSB multiplies the smoothed probability by the smoothed size', () => {
    // p: 0, .5, .25, .625; size: 4, 3
    assert.deepEqual(tsb([0, 4, 0, 2], 2, { alpha: 0.5, beta: 0.5 }), [1.875, 1.875]);
  });

  it('ADIDA aggregates into buckets of the demand interval, ending at the last period', () => {
    // ADI 8/3 -> buckets of 3: [0,4,0]=4 and [0,3,0]=3; SES of (4, 3) -> 3.5; per period 3.5/3
    assert.equal(averageDemandInterval([0, 2, 0, 4, 0, 0, 3, 0]), 8 / 3);
    adida([0, 2, 0, 4, 0, 0, 3, 0], 2).forEach((v) => near(v, 3.5 / 3, 1e-3));
  });

  it('forecasts zero when there has been no demand', () => {
    for (const method of [croston, sba, tsb, adida]) assert.deepEqual(method([0, 0, 0], 2), [0, 0]);
    assert.equal(averageDemandInterval([0, 0]), null);
  });

  it('TSB decays after demand stops, Croston does not', () => {
    const stopped = [3, 0, 3, 0, 3, ...new Array<number>(20).fill(0)];
    assert.ok(tsb(stopped, 1)[0] < croston(stopped, 1)[0] / 2);
  });
});
