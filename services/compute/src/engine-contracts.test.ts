/**
 * The pure engines import nothing of the project, so they keep their own copies of the values
 * the API publishes; these tests hold each copy equal to the contract's one declaration.
 */
import { strict as assert } from 'node:assert';
import * as contracts from '@supply/contracts';
import * as forecast from './engines/forecast/index';
import * as mrp from './engines/mrp/index';

describe('engines against the contracts', () => {
  it('the forecast engine takes exactly the published algorithms, constraints, imputations and demand classes', () => {
    assert.deepEqual([...forecast.ALGORITHMS], [...contracts.FORECAST_ALGORITHMS]);
    assert.deepEqual([...forecast.CONSTRAINTS], [...contracts.FORECAST_CONSTRAINTS]);
    assert.deepEqual([...forecast.MISSING_IMPUTATIONS], [...contracts.MISSING_IMPUTATIONS]);
    assert.deepEqual([...forecast.SERIES_CLASSES], [...contracts.SERIES_CLASSES]);
  });

  it('the MRP engine takes exactly the published lot-sizing rules, supply policies, buckets and week days', () => {
    assert.deepEqual([...mrp.LOT_SIZING_RULES], [...contracts.LOT_SIZING_RULES]);
    assert.deepEqual([...mrp.SUPPLY_POLICIES], [...contracts.SUPPLY_POLICIES]);
    assert.deepEqual([...mrp.BUCKET_SIZES], [...contracts.CALENDAR_BUCKETS]);
    assert.deepEqual([...mrp.WEEK_DAYS], [...contracts.WEEK_DAYS]);
  });
});
