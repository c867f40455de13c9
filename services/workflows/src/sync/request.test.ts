import assert from 'node:assert/strict';
import { ValidationError } from '@supply/kit';
import { MAX_COLUMNS, MAX_JSON_ROWS, parseImportFields, parseJsonLoad } from './request';
import { SALES } from './entities';

function fieldsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return { ...err.fields };
  }
  assert.fail('expected a ValidationError');
}

describe('import form fields', () => {
  it('refuses a field_mappings index past the column limit at once, allocating nothing by it', () => {
    for (const index of ['99999999', '400000000', String(MAX_COLUMNS)]) {
      const started = performance.now();
      const fields = fieldsOf(() => parseImportFields('sales', 'sync', { field_mappings: { 0: 'item_name', [index]: 'quantity' } }));
      assert.ok(performance.now() - started < 100, `index ${index} took ${performance.now() - started} ms`);
      assert.deepEqual(Object.keys(fields), [`field_mappings.${index}`]);
      assert.match(fields[`field_mappings.${index}`]![0]!, new RegExp(`below ${MAX_COLUMNS}`));
    }
  });

  it('still maps bracket indexes below the limit, gaps as skipped columns', () => {
    const mapping: Record<string, string> = {};
    SALES.fields.forEach((field, i) => (mapping[String(i * 2)] = field));
    const { file } = parseImportFields('sales', 'sync', { field_mappings: mapping });
    assert.equal(file.field_mappings!.length, SALES.fields.length * 2 - 1);
    assert.equal(file.field_mappings![1], null);
    assert.equal(file.field_mappings![2], SALES.fields[1]);
  });

  it('refuses a JSON list of mappings longer than the column limit', () => {
    const list = JSON.stringify(Array.from({ length: MAX_COLUMNS + 1 }, () => ''));
    assert.deepEqual(Object.keys(fieldsOf(() => parseImportFields('sales', 'sync', { field_mappings: list }))), ['field_mappings']);
  });

  it('takes a JSON form field nested past the depth limit as the string it is', () => {
    const deep = '{"sale_type_name":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
    assert.deepEqual(
      fieldsOf(() => parseImportFields('sales', 'sync', { mode: 'replace', scope: deep })),
      { scope: ['The scope field must be an object.'] },
    );
  });

  it('names prototype-named keys of a body like any other field', () => {
    const fields = fieldsOf(() =>
      parseJsonLoad('sales', 'sync', JSON.parse('{"data": [], "scope": {"__proto__": "x", "constructor": "y"}, "mode": "replace"}')),
    );
    assert.ok(fields['scope.__proto__'] && fields['scope.constructor'] && fields.data, JSON.stringify(fields));
  });
});

describe('JSON load requests', () => {
  const row = { item_name: 'SKU-0001' };

  it('an upsert with nothing but rows takes the defaults: creates and updates allowed, all or nothing', () => {
    const { request, rows } = parseJsonLoad('sales', 'sync', { data: [row] });
    assert.equal(request.spec.entity, 'sales');
    assert.equal(request.mode, 'upsert');
    assert.equal(request.dry_run, false);
    assert.equal(request.scope, null);
    assert.deepEqual(request.options, { allow_record_creation: true, allow_record_update: true, continue_on_error: false });
    assert.equal(request.rows_path, 'data');
    assert.deepEqual(rows, [row]);
  });

  it("reads options and dry_run as Laravel booleans (true, false, 1, 0, '1', '0', 'true', 'false')", () => {
    const { request } = parseJsonLoad('inventory', 'sync', {
      dry_run: '1',
      options: { allow_record_creation: 0, allow_record_update: 'false', continue_on_error: 'true' },
      data: [row],
    });
    assert.equal(request.spec.entity, 'inventory');
    assert.equal(request.dry_run, true);
    assert.deepEqual(request.options, { allow_record_creation: false, allow_record_update: false, continue_on_error: true });
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', { dry_run: 'yes', options: { continue_on_error: 2 }, data: [row] })),
      {
        dry_run: ['The dry_run field must be true or false.'],
        'options.continue_on_error': ['The options.continue_on_error field must be true or false.'],
      },
    );
  });

  it('refuses a body that is not an object, and rows that are missing, not a list, empty or too many', () => {
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', [row])),
      { body: ['The request body must be a JSON object.'] },
    );
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', {})),
      { data: ['The data field is required.'] },
    );
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', { data: row })),
      { data: ['The data field must be an array.'] },
    );
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', { data: [] })),
      { data: ['The data field must have at least 1 item.'] },
    );
    assert.deepEqual(
      Object.keys(fieldsOf(() => parseJsonLoad('sales', 'sync', { data: Array.from({ length: MAX_JSON_ROWS + 1 }, () => row) }))),
      ['data'],
    );
    assert.equal(parseJsonLoad('sales', 'sync', { data: Array.from({ length: MAX_JSON_ROWS }, () => row) }).rows.length, MAX_JSON_ROWS);
  });

  it('replace needs a scope of the entity: sales by sale type and/or customer group, inventory by location and/or item', () => {
    assert.deepEqual(Object.keys(fieldsOf(() => parseJsonLoad('sales', 'sync', { mode: 'replace', data: [row] }))), ['scope']);
    const sales = parseJsonLoad('sales', 'sync', { mode: 'replace', scope: { customer_group: 'Retail' }, data: [row] }).request;
    assert.deepEqual([sales.mode, sales.scope], ['replace', { customer_group: 'Retail' }]);
    const inventory = parseJsonLoad('inventory', 'sync', {
      mode: 'replace',
      scope: { location: 'DC-East', item: '' },
      data: [row],
    }).request;
    assert.deepEqual(inventory.scope, { location: 'DC-East' }, 'an empty scope field is no constraint');

    const wrongEntity = fieldsOf(() =>
      parseJsonLoad('inventory', 'sync', { mode: 'replace', scope: { customer_group: 'Retail' }, data: [row] }),
    );
    assert.match(wrongEntity['scope.customer_group']![0]!, /prohibited; a inventory scope takes location and item/);
    assert.deepEqual(
      wrongEntity.scope,
      ['The scope field is required when mode is replace (name location and/or item).'],
      'what is left is no scope at all',
    );
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', { mode: 'replace', scope: { sale_type: 7 }, data: [row] }))['scope.sale_type'],
      ['The scope.sale_type field must be a string.'],
    );
    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'sync', { mode: 'merge', data: [row] })),
      { mode: ['The selected mode is invalid.'] },
    );
  });

  it('an upsert may carry a scope, checked like the scope of a replace', () => {
    const { request } = parseJsonLoad('sales', 'sync', { scope: { sale_type: 'History' }, data: [row] });
    assert.deepEqual([request.mode, request.scope], ['upsert', { sale_type: 'History' }]);
    assert.deepEqual(Object.keys(fieldsOf(() => parseJsonLoad('sales', 'sync', { scope: { location: 'DC-East' }, data: [row] }))), [
      'scope.location',
    ]);
  });

  it('legacy loads read rows from payload and need all three arguments as booleans, nested or at the top level', () => {
    const nested = parseJsonLoad('sales', 'legacy', {
      arguments: { allow_record_creation: true, allow_record_update: '0', should_continue_on_error: 1 },
      payload: [row],
      mode: 'replace',
      dry_run: true,
    });
    assert.deepEqual(nested.request.options, { allow_record_creation: true, allow_record_update: false, continue_on_error: true });
    assert.deepEqual(
      [nested.request.mode, nested.request.dry_run, nested.request.scope, nested.request.rows_path],
      ['upsert', false, null, 'payload'],
      'legacy has no modes, dry runs or scopes',
    );

    const topLevel = parseJsonLoad('inventory', 'legacy', {
      allow_record_creation: 'true',
      allow_record_update: 'true',
      should_continue_on_error: 'false',
      payload: [row],
    });
    assert.deepEqual(topLevel.request.options, { allow_record_creation: true, allow_record_update: true, continue_on_error: false });

    assert.deepEqual(
      fieldsOf(() => parseJsonLoad('sales', 'legacy', { arguments: { allow_record_creation: true }, payload: [row] })),
      {
        'arguments.allow_record_update': ['The arguments.allow_record_update field is required.'],
        'arguments.should_continue_on_error': ['The arguments.should_continue_on_error field is required.'],
      },
    );
    assert.deepEqual(Object.keys(fieldsOf(() => parseJsonLoad('sales', 'legacy', { payload: [row] }))), [
      'arguments.allow_record_creation',
      'arguments.allow_record_update',
      'arguments.should_continue_on_error',
    ]);
    assert.deepEqual(fieldsOf(() => parseJsonLoad('sales', 'legacy', { arguments: 'yes', payload: [row] }))['arguments'], [
      'The arguments field must be an object.',
    ]);
    assert.deepEqual(
      Object.keys(
        fieldsOf(() =>
          parseJsonLoad('sales', 'legacy', {
            arguments: { allow_record_creation: true, allow_record_update: true, should_continue_on_error: true },
            data: [row],
          }),
        ),
      ),
      ['payload'],
    );
  });
});

describe('import form fields, beyond the mappings', () => {
  it('takes scope and options as JSON strings, as a form carries them', () => {
    const { request, file } = parseImportFields('sales', 'sync', {
      mode: 'replace',
      scope: '{"sale_type": "History"}',
      options: '{"continue_on_error": "1"}',
      headers_match_exactly: '1',
    });
    assert.deepEqual(request.scope, { sale_type: 'History' });
    assert.equal(request.options.continue_on_error, true);
    assert.equal(file.headers_match_exactly, true);
    assert.equal(file.field_mappings, null);
  });

  it('field_mappings name fields of the entity, each once, and map every required field', () => {
    const fields = fieldsOf(() => parseImportFields('inventory', 'sync', { field_mappings: ['item_name', 'sell_date', 'item_name'] }));
    assert.match(fields['field_mappings.1']![0]!, /The selected field_mappings.1 is invalid; use one of item_name, location_name/);
    assert.deepEqual(fields['field_mappings.2'], ['The field_mappings.2 field has a duplicate value.']);

    const missing = fieldsOf(() => parseImportFields('inventory', 'sync', { field_mappings: 'item_name, location_name, quantity' }));
    assert.deepEqual(missing, {
      field_mappings: ['The field_mappings must map a column to each required field; missing: inventory_date, uom.'],
    });

    const { file } = parseImportFields('inventory', 'sync', { field_mappings: 'item_name,location_name,,inventory_date,quantity,uom' });
    assert.deepEqual(file.field_mappings, ['item_name', 'location_name', null, 'inventory_date', 'quantity', 'uom']);
  });
});
