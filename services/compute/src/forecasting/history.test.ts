import assert from 'node:assert/strict';
import { supply_transactional_v1 as tpb } from '@supply/contracts';
import { gridEnd, seriesInput } from './history';

describe('forecast history grid', () => {
  it('ends the grid at the last whole period from the last sale that is not after the history end', () => {
    assert.equal(gridEnd('2024-10-07', 'week', '2024-12-30'), '2024-12-30');
    assert.equal(gridEnd('2024-10-07', 'week', '2024-12-31'), '2024-12-30');
    assert.equal(gridEnd('2024-10-07', 'week', '2024-12-29'), '2024-12-23');
    assert.equal(gridEnd('2024-10-07', 'week', '2024-10-01'), '2024-10-07');
    assert.equal(gridEnd('2024-10-31', 'month', '2024-12-15'), '2024-11-30');
    assert.equal(gridEnd('2024-10-31', 'month', '2024-12-31'), '2024-12-31');
    assert.equal(gridEnd('2024-01-01', 'day', '2024-01-05'), '2024-01-05');
    assert.equal(gridEnd('2022-03-01', 'year', '2024-02-28'), '2023-03-01');
  });

  const record = (
    id: number,
    sell_date: string,
    quantity: number,
    interval: [number, string] = [2, 'week'],
    uom: [number, string] = [1, 'Each'],
  ) =>
    tpb.SalesRecord.fromPartial({
      id,
      sell_date,
      quantity,
      timing_interval_id: interval[0],
      timing_interval_span: interval[1],
      uom_id: uom[0],
      uom_name: uom[1],
      uom_abbr: uom[1].slice(0, 2).toLowerCase(),
    });

  it('uses the interval most records have, the unit of the latest record, and marks the periods after the last sale missing', () => {
    const input = seriesInput(
      [
        record(1, '2024-12-02', 5),
        record(2, '2024-12-09', 0, [2, 'week'], [3, 'Case']),
        record(3, '2024-12-01', 40, [3, 'month']),
        record(4, '2024-11-25', 7),
      ],
      '2024-12-31',
    )!;
    assert.equal(input.frequency, 'week');
    assert.deepEqual(input.interval, { id: 2, span: 'week' });
    assert.deepEqual(input.uom, { id: 3, name: 'Case', abbr: 'ca' });
    assert.deepEqual(input.points, [
      { date: '2024-12-02', value: 5 },
      { date: '2024-12-09', value: 0 },
      { date: '2024-11-25', value: 7 },
      { date: '2024-12-30', value: null },
    ]);
    assert.equal(seriesInput([], '2024-12-31'), null);
  });

  it('refuses a series whose History is on an interval with no forecasting frequency', () => {
    assert.throws(() => seriesInput([record(1, '2024-12-02', 5, [9, 'fortnight'])], null), /fortnight/);
  });
});
