import assert from 'node:assert/strict';
import { ADI_CUTOFF, CV2_CUTOFF, classifySeries } from './classify';

describe('forecast/classify', () => {
  it('computes ADI as periods per demand and CV² from the sample variance of demand sizes', () => {
    const profile = classifySeries([0, 3, 0, 10, 17, 0]);
    assert.equal(profile.adi, 2);
    assert.equal(profile.cv2, 49 / 100);
    assert.equal(profile.nonZeroCount, 3);
  });

  it('places the four quadrants of Syntetos-Boylan', () => {
    assert.equal(classifySeries([5, 6, 5, 6, 5, 6]).seriesClass, 'smooth');
    assert.equal(classifySeries([1, 20, 2, 30, 1, 25]).seriesClass, 'erratic');
    assert.equal(classifySeries([0, 0, 5, 0, 0, 6, 0, 0, 5]).seriesClass, 'intermittent');
    assert.equal(classifySeries([0, 0, 1, 0, 0, 40, 0, 0, 2]).seriesClass, 'lumpy');
    assert.equal(classifySeries([0, 0, 0]).seriesClass, 'no_demand');
    assert.equal(classifySeries([]).seriesClass, 'no_demand');
  });

  it('puts values exactly on a cut-off on the upper side (ADI 1.32, CV² 0.49)', () => {
    // 25 demands in 33 periods: ADI = 1.32 exactly
    const timing = [...new Array<number>(25).fill(4), ...new Array<number>(8).fill(0)];
    assert.equal(classifySeries(timing).adi, ADI_CUTOFF);
    assert.equal(classifySeries(timing).seriesClass, 'intermittent');
    // sizes 3, 10, 17: mean 10, sample variance 49, CV² = 0.49 exactly
    assert.equal(classifySeries([3, 10, 17]).cv2, CV2_CUTOFF);
    assert.equal(classifySeries([3, 10, 17]).seriesClass, 'erratic');
    assert.equal(classifySeries([4, 10, 16]).seriesClass, 'smooth');
    const justBelow = [...new Array<number>(26).fill(4), ...new Array<number>(8).fill(0)];
    assert.equal(classifySeries(justBelow).seriesClass, 'smooth');
  });

  it('keeps CV² finite when non-zero values cancel out', () => {
    const profile = classifySeries([5, -5, 5, -5]);
    assert.ok(Number.isFinite(profile.cv2));
    assert.equal(profile.seriesClass, 'erratic');
  });
});
