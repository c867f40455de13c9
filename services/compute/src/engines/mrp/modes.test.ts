import assert from 'node:assert/strict';
import { bucketsFromCalendar } from './buckets';
import { mapModeInputs, sellThroughDemand, type PartnerLocation, type PartnerPlanInput } from './modes';
import { planItemLocation } from './plan';

const WEEKS = bucketsFromCalendar({ start: '2025-01-06', bucket: 'week', count: 6 });

function partnerInput(partner: Partial<PartnerLocation> = {}): PartnerPlanInput {
  return {
    mode: 'partner',
    period_starts: WEEKS,
    partner: {
      sell_through: [10, 20, 30, 40],
      on_hand: 25,
      in_transit: [0, 15, 0, 0, 0, 0],
      open_orders: [0, 0, 10, 0, 0, 0],
      parameters: { lead_time: 1, safety_stock: 5 },
      ...partner,
    },
  };
}

describe('planning/modes', () => {
  it('partner mode repeats the sell-through window as demand by default', () => {
    assert.deepEqual(Array.from(sellThroughDemand(partnerInput().partner, 6)), [10, 20, 30, 40, 10, 20]);
  });

  it('partner mode can use the average of the most recent sell-through buckets', () => {
    const partner = partnerInput({ sell_through_basis: 'average', average_window: 2 }).partner;
    assert.deepEqual(Array.from(sellThroughDemand(partner, 3)), [35, 35, 35]);
    const wholeHistory = partnerInput({ sell_through_basis: 'average' }).partner;
    assert.deepEqual(Array.from(sellThroughDemand(wholeHistory, 2)), [25, 25]);
  });

  it('partner mode maps sell-through, partner on-hand and inbound shipments onto the netting inputs', () => {
    const mapped = mapModeInputs(partnerInput());
    assert.deepEqual(Array.from(mapped.gross), [10, 20, 30, 40, 10, 20]);
    assert.deepEqual(Array.from(mapped.scheduled!), [0, 15, 10, 0, 0, 0], 'in transit plus open orders');
    assert.equal(mapped.on_hand, 25);
    assert.deepEqual(mapped.parameters, { lead_time: 1, safety_stock: 5 });
  });

  it('partner mode plans the partner replenishment row by row', () => {
    const result = planItemLocation(partnerInput());
    assert.equal(result.mode, 'partner');
    assert.equal(result.on_hand, 25);
    const rows = result
      .rows()
      .map((r) => [
        r.gross_requirements,
        r.scheduled_receipts,
        r.projected_available,
        r.net_requirements,
        r.planned_receipts,
        r.planned_releases,
      ]);
    assert.deepEqual(rows, [
      //GR  SR  PA  NR  PR  PL
      [10, 0, 15, 0, 0, 0],
      [20, 15, 10, 0, 0, 15],
      [30, 10, 5, 15, 15, 40],
      [40, 0, 5, 40, 40, 10],
      [10, 0, 5, 10, 10, 20],
      [20, 0, 5, 20, 20, 0],
    ]);
  });

  it('a standard plan fed the mapped partner inputs nets identically: only the input mapping differs', () => {
    const partner = planItemLocation(partnerInput());
    const standard = planItemLocation({
      period_starts: WEEKS,
      gross_requirements: [10, 20, 30, 40, 10, 20],
      scheduled_receipts: [0, 15, 10, 0, 0, 0],
      on_hand: 25,
      parameters: { lead_time: 1, safety_stock: 5 },
    });
    assert.equal(standard.mode, 'standard');
    assert.deepEqual(Array.from(partner.planned_releases), Array.from(standard.planned_releases));
    assert.deepEqual(Array.from(partner.projected_available), Array.from(standard.projected_available));
  });

  it('partner mode without inbound shipments nets from on-hand alone', () => {
    const result = planItemLocation(partnerInput({ in_transit: undefined, open_orders: undefined }));
    assert.deepEqual(Array.from(result.scheduled_receipts), [0, 0, 0, 0, 0, 0]);
    assert.deepEqual(Array.from(result.planned_receipts), [0, 10, 30, 40, 10, 20]);
  });

  it('reports partner input errors under the partner path', () => {
    assert.throws(() => planItemLocation(partnerInput({ parameters: { lead_time: -1 } })), {
      field: 'partner.parameters.lead_time',
    });
    assert.throws(() => planItemLocation(partnerInput({ sell_through: [] })), { field: 'partner.sell_through' });
    assert.throws(() => planItemLocation(partnerInput({ sell_through: [1, -1] })), { field: 'partner.sell_through.1' });
    assert.throws(() => planItemLocation(partnerInput({ in_transit: [1] })), { field: 'partner.in_transit' });
    assert.throws(() => planItemLocation(partnerInput({ sell_through_basis: 'average', average_window: 0 })), {
      field: 'partner.average_window',
    });
    assert.throws(() => planItemLocation({ ...partnerInput(), mode: 'vmi' as 'partner' }), { field: 'mode' });
  });
});
