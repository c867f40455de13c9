import assert from 'node:assert/strict';
import { POOL_GAP, combinationWeights, holdoutPlan, pooledWeights } from './auto';
import {
  COMBINATION_MEMBERS,
  COMBINATION_TRIM,
  DIVERGENCE_FACTOR,
  LEVEL_OR_TREND_MIN_LENGTH,
  SHORT_SEASON_MAX,
  combination,
  prepareHistory,
  reinDivergentMembers,
  runMethod,
  seasonalForMembers,
  trimmedWeightedMean,
  weightedMean,
} from './methods';
import { MIN_LAUNCHED_PERIODS, sinceLaunch } from './forecast';
import { ALGORITHMS, forecastBatch, forecastDatedSeries, forecastSeries } from './index';

/** Deterministic pseudo-random demand so property tests are reproducible. */
function demandSeries(length: number, seed: number, shape: 'smooth' | 'intermittent' | 'trend'): number[] {
  let state = seed;
  const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
  return Array.from({ length }, (_, t) => {
    if (shape === 'intermittent') return next() < 0.3 ? Math.round(1 + 9 * next()) : 0;
    const season = 1 + 0.3 * Math.sin((2 * Math.PI * t) / 12);
    const level = shape === 'trend' ? 50 - 0.8 * t : 50;
    return Math.round(Math.max(0, level * season + 10 * (next() - 0.5)));
  });
}

describe('forecast/forecastSeries', () => {
  it("does not replay a one-off spike as next year's season on a history without one", () => {
    let state = 3;
    const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
    const history = Array.from({ length: 51 }, () => Math.round(10 + 4 * (next() - 0.5)));
    history[40] = 10_000; // a data-entry error 11 months ago
    const result = forecastSeries(history, { horizon: 6, period: 12 });
    // Seasonal naive forecast 10,000 for the spike's month next year, the airline model 7.6 million.
    assert.notEqual(result.model, 'seasonal_naive');
    assert.ok(
      result.forecast.every((v) => v <= 50),
      `${result.model}: ${result.forecast.join(' ')}`,
    );
  });

  it('forecasts and bounds a history with a data-entry error from the demand around it', () => {
    let state = 7;
    const next = () => (state = (state * 16807) % 2147483647) / 2147483647;
    const history = Array.from({ length: 51 }, () => Math.round(8 + 4 * next()));
    history[40] = 10_000;
    // Over a year's horizon every holdout window held the spike: 109 a month, 95% bound 10,099.
    const result = forecastSeries(history, { horizon: 12, period: 12 });
    assert.equal(result.parameters.spikes_replaced, 1);
    assert.ok(
      result.forecast.every((v) => v >= 8 && v <= 12 && Number.isInteger(v)),
      `${result.model}: ${result.forecast.join(' ')}`,
    );
    assert.ok(
      result.intervals.hi95.every((v) => v <= 20),
      result.intervals.hi95.join(' '),
    );
    // Intermittent demand keeps its rare large orders.
    const orders = [0, 0, 3, 0, 0, 0, 2, 0, 0, 4, 0, 0, 0, 0, 400, 0, 0, 3, 0, 0, 0, 2, 0, 0];
    assert.equal(forecastSeries(orders, { horizon: 6, period: 12 }).parameters.spikes_replaced, undefined);
  });

  it('keeps every bound a finite number next to the largest double', () => {
    const history = Array.from({ length: 30 }, (_, t) => 1.7e308 * (0.5 + (0.5 * ((t * 7) % 5)) / 4));
    const result = forecastSeries(history, { horizon: 4, period: 12 });
    const { lo80, hi80, lo95, hi95 } = result.intervals;
    assert.ok([...result.forecast, ...lo80, ...hi80, ...lo95, ...hi95].every(Number.isFinite), JSON.stringify(result.intervals));
  });

  it('forecasts a constant series as its constant with every algorithm', () => {
    for (const algorithm of ALGORITHMS) {
      const result = forecastSeries(new Array(30).fill(12), { horizon: 4, period: 12, algorithm });
      assert.deepEqual(result.forecast, [12, 12, 12, 12], algorithm);
    }
  });

  it('forecasts a pure seasonal series as its season', () => {
    const season = [10, 20, 30, 40];
    const values = Array.from({ length: 24 }, (_, t) => season[t % 4]);
    const result = forecastSeries(values, { horizon: 8, period: 4 });
    assert.deepEqual(result.forecast, [10, 20, 30, 40, 10, 20, 30, 40]);
    assert.equal(result.seriesClass, 'smooth');
  });

  it('forecasts zero for an all-zero or empty history', () => {
    const zero = forecastSeries(new Array(20).fill(0), { horizon: 3, period: 7 });
    assert.deepEqual(zero.forecast, [0, 0, 0]);
    assert.equal(zero.seriesClass, 'no_demand');
    const empty = forecastSeries([], { horizon: 2, period: 7 });
    assert.deepEqual(empty.forecast, [0, 0]);
    assert.equal(empty.holdoutError, null);
  });

  it('handles one and two points without NaN', () => {
    assert.deepEqual(forecastSeries([5], { horizon: 2, period: 12 }).forecast, [5, 5]);
    for (const algorithm of ALGORITHMS) {
      const result = forecastSeries([5, 9], { horizon: 3, period: 12, algorithm, constraint: 'none' });
      assert.ok(result.forecast.every(Number.isFinite), algorithm);
    }
  });

  it('forecasts a new item from its launch, not as intermittent demand', () => {
    // 30 months before the launch, then a ramp to 100 a month.
    const launched = [...new Array<number>(30).fill(0), 20, 40, 60, 80, 95, 100];
    assert.deepEqual(sinceLaunch(launched), [20, 40, 60, 80, 95, 100]);
    const result = forecastSeries(launched, { horizon: 6, period: 12 });
    assert.equal(result.seriesClass, 'smooth');
    assert.ok(
      result.forecast.every((v) => v >= 80),
      result.forecast.join(','),
    );
    // Kept whole: sales that come now and then (the zeros are how the item sells), too few periods
    // since the first sale to tell, and a history that starts with a sale.
    const intermittent = [0, 0, 0, 0, 5, 0, 0, 3, 0, 0, 0, 4, 0, 0, 6, 0];
    assert.equal(sinceLaunch(intermittent), intermittent);
    const late = [...new Array<number>(11).fill(0), ...new Array<number>(MIN_LAUNCHED_PERIODS - 1).fill(5)];
    assert.equal(sinceLaunch(late), late);
    assert.ok(forecastSeries(late, { horizon: 3, period: 12 }).forecast.every((v) => v < 5));
    const selling = [4, 0, 5, 6, 5];
    assert.equal(sinceLaunch(selling), selling);
  });

  it('forecasts a history below zero as fitted under the default constraint, intervals included', () => {
    // A logarithm: every value negative, rising by 0.05 a year (R's lmtest::moneydemand is such data).
    const values = Array.from({ length: 40 }, (_, t) => -7 + 0.05 * t + 0.01 * Math.sin(t));
    const result = forecastSeries(values, { horizon: 6, period: 1 });
    assert.ok(
      result.forecast.every((v, j) => v < 0 && Math.abs(v - (-7 + 0.05 * (40 + j))) < 0.1),
      result.forecast.join(','),
    );
    for (let j = 0; j < 6; j++)
      assert.ok(
        result.intervals.lo95[j] < result.forecast[j] && result.forecast[j] < result.intervals.hi95[j] && result.intervals.hi95[j] < 0,
      );
  });

  it('never returns NaN, Infinity or negative values under the default constraint', () => {
    const histories = [
      demandSeries(60, 1, 'smooth'),
      demandSeries(60, 2, 'trend'),
      demandSeries(90, 3, 'intermittent'),
      demandSeries(13, 4, 'smooth'),
      [0, 0, 0, 5, 0, 0, 0, 0, 0, 1],
      [1e9, 1, 1e9, 1, 1e9, 1, 1e9, 1],
    ];
    for (const values of histories) {
      for (const algorithm of ALGORITHMS) {
        const result = forecastSeries(values, { horizon: 18, period: 12, algorithm });
        assert.equal(result.forecast.length, 18);
        assert.ok(
          result.forecast.every((v) => Number.isFinite(v) && v >= 0),
          `${algorithm}: ${result.forecast.join(',')}`,
        );
        assert.ok(result.holdoutError === null || Number.isFinite(result.holdoutError));
      }
    }
  });

  it('rounds to whole units when the history is whole units', () => {
    const result = forecastSeries(demandSeries(48, 5, 'smooth'), { horizon: 6, period: 12 });
    assert.ok(result.forecast.every(Number.isInteger));
    const fractional = forecastSeries([1.5, 2.25, 1.75, 2.5, 2, 2.25, 1.5, 2], { horizon: 3, period: 1 });
    assert.ok(!fractional.forecast.every(Number.isInteger));
  });

  it('is deterministic', () => {
    const values = demandSeries(72, 6, 'smooth');
    for (const algorithm of ['auto', 'ets', 'optimized_theta'] as const) {
      const a = forecastSeries(values, { horizon: 12, period: 12, algorithm });
      const b = forecastSeries(values, { horizon: 12, period: 12, algorithm });
      assert.deepEqual(a, b);
    }
  });

  it('routes intermittent demand to intermittent methods and smooth demand to the others', () => {
    const intermittent = forecastSeries(demandSeries(90, 7, 'intermittent'), { horizon: 5, period: 7 });
    assert.ok(['croston', 'sba', 'tsb', 'adida'].includes(intermittent.model), intermittent.model);
    assert.ok(['intermittent', 'lumpy'].includes(intermittent.seriesClass));
    const smooth = forecastSeries(demandSeries(60, 8, 'smooth'), { horizon: 5, period: 12 });
    assert.ok(!['croston', 'sba', 'tsb', 'adida'].includes(smooth.model), smooth.model);
    assert.ok(smooth.holdoutError !== null && smooth.holdoutError > 0);
  });

  it('picks an exact model when the holdout shows it, e.g. Holt on a straight line', () => {
    const line = Array.from({ length: 30 }, (_, t) => 10 + 2 * t);
    const result = forecastSeries(line, { horizon: 3, period: 12 });
    assert.equal(result.model, 'holt');
    assert.deepEqual(result.forecast, [70, 72, 74]);
  });

  it('keeps the seasonal verdict of the whole history at holdout origins', () => {
    // Five years of a smooth season: shorter holdout windows alone would fail the seasonality test.
    let state = 5;
    const noise = () => (state = (state * 16807) % 2147483647) / 2147483647;
    const values = Array.from({ length: 60 }, (_, t) => Math.round(100 * (1 + 0.3 * Math.sin((2 * Math.PI * t) / 12)) + 30 * noise()));
    const result = forecastSeries(values, { horizon: 12, period: 12 });
    assert.equal(result.model, 'combination');
    assert.ok(Math.max(...result.forecast) - Math.min(...result.forecast) > 40, result.forecast.join(','));
  });

  it('honours a named algorithm and reports what ran', () => {
    const values = demandSeries(48, 9, 'smooth');
    assert.equal(forecastSeries(values, { horizon: 3, period: 12, algorithm: 'theta' }).model, 'theta');
    assert.equal(forecastSeries(values, { horizon: 3, period: 12, algorithm: 'croston' }).model, 'croston');
    assert.match(forecastSeries(values, { horizon: 3, period: 12, algorithm: 'ets' }).model, /^ets\([AM],(N|A|Ad),[NAM]\)/);
    const unevaluated = forecastSeries(values, { horizon: 3, period: 12, algorithm: 'theta', evaluate: false });
    assert.equal(unevaluated.holdoutError, null);
  });

  it('runs ETS on seasonally adjusted data when the season is too long for state space seasonality', () => {
    // A holiday peak in weeks 45-51 of each year.
    const values = Array.from({ length: 156 }, (_, t) => 500 + (t % 52 >= 45 ? 300 : 0) + ((t * 37) % 11));
    const result = forecastSeries(values, { horizon: 4, period: 52, algorithm: 'ets', evaluate: false });
    assert.match(result.model, /^ets\([AM],(N|A|Ad),N\)\+decomposition$/);
    result.forecast.forEach((v, j) => assert.ok(Math.abs(v - values[104 + j]) < 30, `${v} vs ${values[104 + j]}`));
  });

  it('treats series shorter than two seasons as non-seasonal', () => {
    const values = [10, 30, 20, 40, 11, 31, 21, 41, 12, 32, 22, 42, 13, 33, 23, 43];
    const forced = forecastSeries(values, { horizon: 2, period: 9, algorithm: 'holt_winters_additive', constraint: 'none' });
    assert.equal(forced.model, 'damped');
    const seasonalOk = forecastSeries(values, { horizon: 2, period: 4, algorithm: 'holt_winters_additive', constraint: 'none' });
    assert.match(seasonalOk.model, /^ets\(A,Ad?,A\)$/);
  });

  it('rejects invalid options and values', () => {
    assert.throws(() => forecastSeries([1, 2], { horizon: -1, period: 1 }), /horizon/);
    assert.throws(() => forecastSeries([1, 2], { horizon: 1.5, period: 1 }), /horizon/);
    assert.throws(() => forecastSeries([1, 2], { horizon: 1, period: 0 }), /period/);
    assert.throws(() => forecastSeries([1, Number.NaN], { horizon: 1, period: 1 }), /finite/);
    assert.throws(() => forecastSeries([1, 2], { horizon: 1, period: 1, algorithm: 'magic' as never }), /algorithm/);
  });

  it('plans up to three holdout origins within a quarter of the history', () => {
    assert.deepEqual(holdoutPlan(48, 18), { cuts: [36, 32, 28], window: 12 });
    assert.deepEqual(holdoutPlan(120, 6), { cuts: [114, 112, 110], window: 6 });
    assert.equal(holdoutPlan(3, 5), null);
  });
});

describe('forecast/forecastDatedSeries and forecastBatch', () => {
  it('imputes gaps, forecasts and dates the future periods', () => {
    const result = forecastDatedSeries(
      [
        { date: '2024-01-01', value: 4 },
        { date: '2024-01-03', value: 4 },
        { date: '2024-01-02', value: null },
      ],
      { horizon: 2, frequency: 'day', missingImputation: 'linear' },
    );
    assert.deepEqual(result.forecast, [4, 4]);
    assert.deepEqual(result.dates, ['2024-01-04', '2024-01-05']);
  });

  it('forecasts a batch in order and names the failing series', () => {
    const results = forecastBatch(
      [
        { id: 'a', points: [{ date: '2024-01-01', value: 1 }] },
        { id: 'b', points: [{ date: '2024-01-01', value: 2 }] },
      ],
      { horizon: 1, frequency: 'month' },
    );
    assert.deepEqual(
      results.map((r) => [r.id, r.forecast[0], r.dates[0]]),
      [
        ['a', 1, '2024-02-01'],
        ['b', 2, '2024-02-01'],
      ],
    );
    assert.throws(
      () => forecastBatch([{ id: 'bad', points: [{ date: '2024-02-31', value: 1 }] }], { horizon: 1, frequency: 'day' }),
      /series "bad": invalid date/,
    );
  });
});

describe('forecast/combination', () => {
  it('reins in a member that runs away from the others, but not growth the history itself shows', () => {
    const members = [
      [10, 11],
      [12, 12],
      [9, 10],
      [500, 5000],
    ];
    reinDivergentMembers(members, [8, 10, 12, 9]);
    assert.deepEqual(members[3], [11, 11.5], 'the runaway member becomes the median');
    assert.deepEqual(members[0], [10, 11]);
    // A history that grew 100-fold within the horizon may be forecast to grow as much.
    const hyper = [
      [2000, 4000],
      [2500, 6000],
      [1500, 3000],
      [4000, 30000],
    ];
    reinDivergentMembers(hyper, [1, 10, 100]);
    assert.deepEqual(hyper[3], [4000, 30000]);
    assert.ok(30000 <= DIVERGENCE_FACTOR * 100 * 100);
  });

  it('keeps a forecast within reach of the history after a last-period spike or on a few values', () => {
    // A level of about 110 and one promotion week at the end: the ARIMA(0,1,1)-with-drift members
    // (two of them on a non-seasonal history) compounded it to 143,573 by step 18.
    const spiked = [
      120.7, 152.5, 123.8, 129.4, 82.5, 66.1, 115.3, 107.7, 124.4, 118.5, 64.7, 80.9, 101.1, 119.4, 173.3, 136.3, 105.4, 81, 73.2, 113.3,
      622.5,
    ];
    const spike = forecastSeries(spiked, { horizon: 18, period: 1 });
    assert.ok(
      spike.forecast.every((v) => v < 2 * 622.5),
      spike.forecast.join(','),
    );
    // Eight noisy values forecast 18 ahead: 4 billion before.
    const few = forecastSeries([1, 4, 3, 1, 1, 1, 2, 16], { horizon: 18, period: 52 });
    assert.ok(
      few.forecast.every((v) => v < 50),
      few.forecast.join(','),
    );
  });

  it('fits its trend members on the log scale for positive data, so growth compounds', () => {
    const values = Array.from({ length: 40 }, (_, t) => 100 * Math.pow(1.05, t) * (1 + 0.01 * Math.sin(t)));
    const result = forecastSeries(values, { horizon: 12, period: 1, algorithm: 'combination', constraint: 'none' });
    assert.equal(result.parameters.log_scale, 1);
    const expected = 100 * Math.pow(1.05, 51);
    assert.ok(Math.abs(result.forecast[11] / expected - 1) < 0.1, `${result.forecast[11]} vs ${expected}`);
    // (A zero in the middle: leading zeros are the time before a launch, and dropped.)
    const withZero = forecastSeries([...values.slice(0, 20), 0, ...values.slice(21)], { horizon: 3, period: 1, algorithm: 'combination' });
    assert.equal(withZero.parameters.log_scale, 0, 'a zero keeps the raw scale');
    const erratic = Array.from({ length: 40 }, (_, t) => [1, 40, 3, 60, 2][t % 5]);
    const raw = forecastSeries(erratic, { horizon: 3, period: 1, algorithm: 'combination' });
    assert.equal(raw.parameters.log_scale, 0, 'erratic demand keeps the raw scale, where a log-scale median would under-forecast');
  });

  it('weights members by the inverse of their holdout errors, equal without usable errors', () => {
    assert.deepEqual(combinationWeights([1, 2, 4]), [1, 0.5, 0.25]);
    assert.equal(combinationWeights(undefined), null);
    assert.equal(combinationWeights([1, Number.NaN]), null);
    assert.equal(combinationWeights([0, 0]), null);
    const values = Array.from({ length: 48 }, (_, t) => 100 + t + 10 * Math.sin(t));
    const history = prepareHistory(values, 1);
    const raw = (member: Parameters<typeof runMethod>[0]) => runMethod(member, history, 6);
    const equal = combination(history, 6, raw);
    assert.equal(equal.members?.length, COMBINATION_MEMBERS.length);
    const only = COMBINATION_MEMBERS.map((_, k) => (k === 1 ? 1 : 0));
    const weighted = combination(history, 6, raw, only);
    assert.deepEqual(weighted.forecast, equal.members?.[1], 'all weight on one member gives that member');
    assert.equal(weighted.parameters?.weighted, 1);
  });

  it('adds Holt-Winters as a seventh member on a short season only, and it follows a season whose amplitude grows', () => {
    assert.equal(SHORT_SEASON_MAX, 4);
    // Quarterly: a level growing 2% a quarter, a season whose swing grows from 10% to 60% of the level.
    const quarterly = Array.from({ length: 40 }, (_, t) => 100 * 1.02 ** t * (1 + (0.1 + (0.5 * t) / 40) * [1, -0.2, -1, 0.2][t % 4]!));
    const history = prepareHistory(quarterly, 4);
    const raw = (member: Parameters<typeof runMethod>[0]) => runMethod(member, history, 8);
    const result = combination(history, 8, raw);
    assert.equal(result.members?.length, COMBINATION_MEMBERS.length + 1);
    assert.equal(result.parameters?.members, COMBINATION_MEMBERS.length + 1);
    // The next year continues the growth of the swing; the Holt-Winters member (last) is closer to it than the fixed-decomposition Theta.
    const truth = Array.from({ length: 8 }, (_, j) => {
      const t = 40 + j;
      return 100 * 1.02 ** t * (1 + (0.1 + (0.5 * t) / 40) * [1, -0.2, -1, 0.2][t % 4]!);
    });
    const mae = (f: readonly number[]) => f.reduce((sum, v, j) => sum + Math.abs(v - truth[j]!), 0) / f.length;
    const members = result.members!;
    assert.ok(mae(members[members.length - 1]!) < mae(members[COMBINATION_MEMBERS.indexOf('theta')]!));
    // Monthly and weekly-season data keep the six.
    for (const period of [7, 12]) {
      const values = Array.from({ length: 60 }, (_, t) => 100 + 20 * Math.sin((2 * Math.PI * t) / period) + t);
      const h = prepareHistory(values, period);
      assert.equal(combination(h, 6, (m) => runMethod(m, h, 6)).members?.length, COMBINATION_MEMBERS.length, `period ${period}`);
    }
  });

  it('pools the members before the widest step in their sorted holdout errors when it is a factor of POOL_GAP or more', () => {
    assert.equal(POOL_GAP, 2);
    // UKgas at its last origin: the airline model (30.7) and the automatic ARIMA (49.2) follow a season whose amplitude grows.
    const mae = [118.6, 121.7, 132.8, 30.7, 49.2, 109.3];
    const weights = combinationWeights(mae)!;
    const pooled = pooledWeights(mae, weights);
    assert.deepEqual(
      pooled.map((w) => w > 0),
      [false, false, false, true, true, false],
    );
    assert.equal(pooled[3], weights[3], 'the pool keeps its inverse-error weights');
    // Close errors, or a widest step under the gap: every member stays.
    assert.deepEqual(pooledWeights([1, 1.5, 2, 2.5], [1, 1, 1, 1]), [1, 1, 1, 1]);
    assert.deepEqual(pooledWeights([12.2, 23.4, 38.6, 42.4], [4, 2, 1, 1]), [4, 2, 1, 1]);
    // One member far ahead pools alone; a perfect (zero-error) member does not divide by zero.
    assert.deepEqual(pooledWeights([10, 30, 31, 32], [3, 1, 1, 1]), [3, 0, 0, 0]);
    assert.deepEqual(pooledWeights([0, 0, 5], [1, 1, 1]), [1, 1, 1]);
  });

  it('averages a pool (members weighted 0 left out) untrimmed, even where a left-out member is not finite', () => {
    const values = Array.from({ length: 48 }, (_, t) => 100 + t + 10 * Math.sin(t));
    const history = prepareHistory(values, 1);
    const raw = (member: Parameters<typeof runMethod>[0]) => runMethod(member, history, 6);
    const equal = combination(history, 6, raw);
    const pool = COMBINATION_MEMBERS.map((_, k) => (k === 0 || k === 4 ? 1 : 0));
    const pooled = combination(history, 6, raw, pool);
    assert.equal(pooled.parameters?.pooled, 1);
    assert.equal(pooled.parameters?.members, 2);
    assert.equal(pooled.parameters?.trimmed, 0);
    const [a, b] = [equal.members![0]!, equal.members![4]!];
    pooled.forecast.forEach((f, j) => assert.ok(Math.abs(f - (a[j]! + b[j]!) / 2) < 1e-9));
    assert.deepEqual(
      weightedMean(
        [
          [1, 2],
          [Number.NaN, Number.POSITIVE_INFINITY],
          [3, 4],
        ],
        [1, 0, 1],
      ),
      [2, 3],
    );
  });

  it("drops each step's highest and lowest member before the weighted mean", () => {
    const members = [
      [1, 10],
      [2, 20],
      [3, 30],
      [100, -50],
    ];
    // Step 0 keeps 2 and 3; step 1 keeps 10 and 20 (the runaway member is the extreme at both ends).
    assert.deepEqual(trimmedWeightedMean(members, [1, 1, 1, 1], 1), [2.5, 15]);
    assert.deepEqual(trimmedWeightedMean(members, [1, 3, 1, 1], 1), [(2 * 3 + 3) / 4, (10 + 20 * 3) / 4]);
    assert.deepEqual(trimmedWeightedMean(members, [1, 1, 1, 1], 0), [26.5, 2.5], 'no trim is the plain mean');
    assert.deepEqual(trimmedWeightedMean(members.slice(0, 2), [1, 1], 1), [1.5, 15], 'too few members: the plain mean');
    assert.ok(Number.isNaN(trimmedWeightedMean([[1], [Number.NaN], [2]], [1, 1, 1], 1)[0]), 'a non-finite member spoils the step');
  });

  it('is trimmed at every season length, weekly data included', () => {
    const values = Array.from({ length: 160 }, (_, t) => 100 + t + 10 * Math.sin(t));
    const trimmedOf = (period: number) => {
      const history = prepareHistory(values, period);
      return combination(history, 6, (member) => runMethod(member, history, 6)).parameters?.trimmed;
    };
    for (const period of [1, 4, 7, 12, 13, 52]) assert.equal(trimmedOf(period), COMBINATION_TRIM, `period ${period}`);
  });

  it('lets its damped-trend member choose a flat level by AICc once the history is long enough', () => {
    const noise = (t: number) => 8 * Math.sin(t * 12.9898) * Math.cos(t * 78.233);
    const dampedOf = (values: number[]) => {
      const history = prepareHistory(values, 1);
      const result = combination(history, 6, (member) => runMethod(member, history, 6));
      return result.members![COMBINATION_MEMBERS.indexOf('damped')];
    };
    const level = Array.from({ length: LEVEL_OR_TREND_MIN_LENGTH + 12 }, (_, t) => 100 + noise(t));
    const flat = dampedOf(level);
    assert.ok(
      flat.every((v) => Math.abs(v - flat[0]) < 1e-9),
      `a level plus noise forecasts flat: ${flat.join(', ')}`,
    );
    const trend = Array.from({ length: LEVEL_OR_TREND_MIN_LENGTH + 12 }, (_, t) => 100 + 5 * t + noise(t));
    const rising = dampedOf(trend);
    assert.ok(rising[5] > rising[0] + 5, `a clear trend keeps its trend: ${rising.join(', ')}`);
    const short = dampedOf(level.slice(0, LEVEL_OR_TREND_MIN_LENGTH - 1));
    assert.ok(
      short.some((v) => Math.abs(v - short[0]) > 1e-6),
      `a short history keeps the damped trend: ${short.join(', ')}`,
    );
  });

  it('averages only its members without drift when the KPSS test finds the history level-stationary', () => {
    const noise = (t: number) => 8 * Math.sin(t * 12.9898) * Math.cos(t * 78.233);
    const run = (values: number[], weights?: number[]) => {
      const history = prepareHistory(values, 1);
      return combination(history, 6, (member) => runMethod(member, history, 6), weights);
    };
    const at = (member: (typeof COMBINATION_MEMBERS)[number]) => COMBINATION_MEMBERS.indexOf(member);
    const level = Array.from({ length: LEVEL_OR_TREND_MIN_LENGTH + 12 }, (_, t) => 100 + noise(t));
    const flat = run(level);
    assert.equal(flat.parameters?.level_stationary, 1);
    assert.equal(flat.parameters?.trimmed, 0);
    assert.equal(flat.parameters?.members, 2);
    const [damped, auto] = [flat.members![at('damped')], flat.members![at('arima_auto')]];
    flat.forecast.forEach((v, h) => assert.ok(Math.abs(v - (damped[h] + auto[h]) / 2) < 1e-9, `step ${h}: ${v}`));
    const weights = COMBINATION_MEMBERS.map((m) => (m === 'damped' ? 3 : 1));
    const weighted = run(level, weights);
    weighted.forecast.forEach((v, h) => assert.ok(Math.abs(v - (3 * damped[h] + auto[h]) / 4) < 1e-9, `weighted step ${h}: ${v}`));

    // A seasonal level keeps the airline model, the member that fits the season itself.
    const seasonalHistory = prepareHistory(
      Array.from({ length: 60 }, (_, t) => 100 + 30 * Math.sin((2 * Math.PI * t) / 12) + noise(t)),
      12,
    );
    assert.equal(seasonalHistory.adjustment.seasonal, true);
    const seasonal = combination(seasonalHistory, 6, (member) => runMethod(member, seasonalHistory, 6));
    assert.equal(seasonal.parameters?.level_stationary, 1);
    assert.equal(seasonal.parameters?.members, 3);
    const kept = ['damped', 'arima', 'arima_auto'] as const;
    seasonal.forecast.forEach((v, h) => {
      const mean = kept.reduce((sum, m) => sum + seasonal.members![at(m)][h], 0) / kept.length;
      assert.ok(Math.abs(v - mean) < 1e-9, `seasonal step ${h}: ${v} against ${mean}`);
    });

    const trend = run(level.map((v, t) => v + 2 * t));
    assert.equal(trend.parameters?.level_stationary, 0, 'a trend is extrapolated by every member');
    assert.equal(trend.parameters?.trimmed, COMBINATION_TRIM);
    const short = run(level.slice(0, LEVEL_OR_TREND_MIN_LENGTH - 1));
    assert.equal(short.parameters?.level_stationary, 0, 'too short a history for the test to tell');
  });

  it('decomposes a trending seasonal series for its members when the differences show the season', () => {
    const values = Array.from({ length: 60 }, (_, t) => 100 + 10 * t + 15 * Math.sin((2 * Math.PI * t) / 12));
    const history = prepareHistory(values, 12);
    assert.equal(history.adjustment.seasonal, false, 'the trend swamps the test on levels');
    assert.equal(seasonalForMembers(history).adjustment.seasonal, true);
  });
});
