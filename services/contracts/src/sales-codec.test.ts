import assert from 'node:assert/strict';
import { QuerySalesResponse, type SalesRecord } from './gen/supply/transactional/v1/transactional';
import { decodeQuerySalesResponse, encodeQuerySalesResponse, TransactionalService } from './sales-codec';

const record = (over: Partial<SalesRecord> = {}): SalesRecord => ({
  id: 7,
  item_customer_group_id: 1_000_001,
  item_id: Number.MAX_SAFE_INTEGER,
  item_name: 'Widget "A" ünïcødé 😀 \u0001',
  customer_group_id: 127,
  customer_group_name: 'Retail',
  sale_type_id: 128,
  sale_type_name: 'History',
  timing_interval_id: 2 ** 32,
  timing_interval_span: 'week',
  uom_id: 16_383,
  uom_name: 'Each',
  uom_abbr: 'ea',
  sell_date: '2024-01-01',
  quantity: 12.5,
  created_at: '2024-01-02T03:04:05.123456Z',
  updated_at: '2024-01-02T03:04:05.123456Z',
  item_hierarchy: [],
  customer_group_hierarchy: [],
  ...over,
});

const messages: Record<string, QuerySalesResponse> = {
  empty: { records: [], page: undefined, item_levels: [], customer_group_levels: [] },
  'a page': {
    records: [
      record(),
      record({ id: 8, quantity: 0, item_name: '', uom_id: 0, item_hierarchy: ['Tools', '', 'ä'], customer_group_hierarchy: [''] }),
      record({ id: 9, quantity: -0.1, customer_group_name: 'x'.repeat(300), created_at: 'é'.repeat(200) }),
      record({ id: 10, quantity: Number.NaN }),
      record({ id: 11, quantity: -Infinity, sell_date: '\ud800 lone surrogate' }),
    ],
    page: { has_more: true, first_position: '[7]', last_position: '["ü",11]' },
    item_levels: ['family', 'ä', ''],
    customer_group_levels: ['region'],
  },
  'a page with no more': {
    records: [record()],
    page: { has_more: false, first_position: '', last_position: '' },
    item_levels: [],
    customer_group_levels: [],
  },
  'negative and large ids (left to the generated code)': {
    records: [record({ id: -5 }), record({ item_id: 2 ** 60 })],
    page: undefined,
    item_levels: [],
    customer_group_levels: [],
  },
};

/** A value, or the message of the error thrown instead. */
const outcome = (fn: () => unknown) => {
  try {
    return { value: fn() };
  } catch (err) {
    return { error: (err as Error).message };
  }
};
const generated = (message: QuerySalesResponse) => Buffer.from(QuerySalesResponse.encode(message).finish());

describe('the QuerySales response codec', () => {
  for (const [name, message] of Object.entries(messages)) {
    it(`writes the generated encoder's bytes and reads back the generated decoder's values: ${name}`, () => {
      let expected: Buffer;
      try {
        expected = generated(message);
      } catch (err) {
        assert.throws(() => encodeQuerySalesResponse(message), { message: (err as Error).message });
        return;
      }
      const bytes = encodeQuerySalesResponse(message);
      assert.deepEqual(bytes, expected);
      assert.deepEqual(
        outcome(() => decodeQuerySalesResponse(bytes)),
        outcome(() => QuerySalesResponse.decode(expected)),
      );
    });
  }

  it('reads fields in any order and skips unknown ones, as the generated decoder does', () => {
    const one = generated({ records: [record({ id: 3 })], page: undefined, item_levels: [], customer_group_levels: [] });
    const page = generated({
      records: [],
      page: { has_more: true, first_position: '[1]', last_position: '[2]' },
      item_levels: ['l'],
      customer_group_levels: [],
    });
    // Unknown fields: a varint (field 20), a fixed64 (21), a length-delimited (22) and a fixed32 (23), at both levels.
    const unknown = Buffer.from([160, 1, 150, 1, 169, 1, 1, 2, 3, 4, 5, 6, 7, 8, 178, 1, 2, 9, 9, 189, 1, 1, 2, 3, 4]);
    const inner = Buffer.concat([Buffer.from([0x4a, 2, 0x77, 0x6b, 0x52, 2, 0x77, 0x6b]), unknown, Buffer.from([8, 42])]);
    const withUnknown = Buffer.concat([Buffer.from([10, inner.length]), inner]);
    const bytes = Buffer.concat([page, unknown, one, withUnknown]);
    const decoded = decodeQuerySalesResponse(bytes);
    assert.deepEqual(decoded, QuerySalesResponse.decode(bytes));
    assert.equal(decoded.records[1]!.id, 42);
    assert.equal(decoded.records[1]!.timing_interval_span, 'wk');
  });

  it('leaves truncated input to the generated decoder (same error)', () => {
    const bytes = generated({ records: [record()], page: undefined, item_levels: [], customer_group_levels: [] }).subarray(0, 40);
    const expected = outcome(() => QuerySalesResponse.decode(bytes));
    assert.ok('error' in expected);
    assert.deepEqual(
      outcome(() => decodeQuerySalesResponse(bytes)),
      expected,
    );
  });

  it('is the QuerySales codec of the service definition', () => {
    assert.equal(TransactionalService.querySales.responseSerialize, encodeQuerySalesResponse);
    assert.equal(TransactionalService.querySales.responseDeserialize, decodeQuerySalesResponse);
    assert.equal(TransactionalService.querySales.path, '/supply.transactional.v1.TransactionalService/QuerySales');
  });
});
