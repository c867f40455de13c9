import assert from 'node:assert/strict';
import { planTargetErrors as targetErrors } from '@supply/contracts';
import { parseGenerationRequest, type TargetFields } from './request';

const none: TargetFields = { item_location_id: 0, item_name: '', location_name: '', view_id: 0, view_name: '' };
const request = (fields: Partial<TargetFields & { mode: string; supply_policy: string }>) => ({
  ...none,
  mode: 'standard',
  supply_policy: '',
  ...fields,
});

describe('supply planning: generate request', () => {
  it('needs exactly one target', () => {
    assert.deepEqual(Object.keys(targetErrors(none)), ['item_location_id']);
    assert.deepEqual(targetErrors({ ...none, item_location_id: 3 }), {});
    assert.deepEqual(targetErrors({ ...none, item_name: 'SKU-0001', location_name: 'DC-East' }), {});
    assert.deepEqual(targetErrors({ ...none, view_name: 'Default' }), {});
  });

  it('names the identifiers that conflict with the first one given', () => {
    assert.deepEqual(targetErrors({ ...none, item_location_id: 3, view_id: 1 }), {
      view_id: ['The view id field prohibits item location id from being present: name one item-location or one view.'],
    });
    assert.deepEqual(Object.keys(targetErrors({ ...none, view_id: 1, view_name: 'Default' })), ['view_name']);
    assert.deepEqual(Object.keys(targetErrors({ ...none, item_location_id: 3, item_name: 'A', location_name: 'B' })), [
      'item_name',
      'location_name',
    ]);
  });

  it('wants item_name and location_name together', () => {
    assert.deepEqual(targetErrors({ ...none, item_name: 'SKU-0001' }), {
      location_name: ['The location name field is required when item name is present.'],
    });
    assert.deepEqual(targetErrors({ ...none, location_name: 'DC-East' }), {
      item_name: ['The item name field is required when location name is present.'],
    });
  });

  it('limits names to 255 characters', () => {
    const long = parseGenerationRequest(request({ view_name: 'v'.repeat(256) }));
    assert.deepEqual(!long.ok && long.errors, { view_name: ['The view name field must not be greater than 255 characters.'] });
  });

  it('parses mode, supply policy and target, reporting every problem at once', () => {
    assert.deepEqual(parseGenerationRequest(request({ view_id: 2 })), {
      ok: true,
      value: { mode: 'standard', supply_policy: 'unconstrained', target: { kind: 'view', view_id: 2, view_name: '' } },
    });
    assert.deepEqual(
      parseGenerationRequest(
        request({ mode: 'partner', supply_policy: 'constrained', item_name: ' SKU-0001 ', location_name: 'Partner-Mart' }),
      ),
      {
        ok: true,
        value: {
          mode: 'partner',
          supply_policy: 'constrained',
          target: { kind: 'names', item_name: 'SKU-0001', location_name: 'Partner-Mart' },
        },
      },
    );
    const bad = parseGenerationRequest(request({ mode: 'fastest', supply_policy: 'maybe', item_location_id: 1, view_name: 'Default' }));
    assert.equal(bad.ok, false);
    assert.deepEqual(Object.keys(!bad.ok ? bad.errors : {}).sort(), ['mode', 'supply_policy', 'view_name']);
    const missing = parseGenerationRequest(request({ mode: '', item_location_id: 1 }));
    assert.deepEqual(!missing.ok && missing.errors, { mode: ['The mode field is required.'] });
  });
});
