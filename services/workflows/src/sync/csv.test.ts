import assert from 'node:assert/strict';
import { ValidationError } from '@supply/kit';
import { columnsFor, CsvRecords } from './csv';
import { SALES } from './entities';

/** Feeds `bytes` in pieces of `size`, as a stream would bring them. */
async function parse(bytes: Buffer, size: number): Promise<string[][]> {
  const csv = new CsvRecords();
  const out: string[][] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...(await csv.push(bytes.subarray(i, i + size))));
  out.push(...(await csv.end()));
  return out;
}

describe('CSV records', () => {
  it('gives the same records however the bytes are split, even inside a multi-byte character or a quoted field', async () => {
    const text = '\ufeffname,note\r\n"Café ""Über"", Größe",ünï\n\n"a\nb",€\n';
    const bytes = Buffer.from(text, 'utf8');
    const whole = await parse(bytes, bytes.length);
    assert.deepEqual(whole, [
      ['name', 'note'],
      ['Café "Über", Größe', 'ünï'],
      ['a\nb', '€'],
    ]);
    for (const size of [1, 2, 3, 7]) assert.deepEqual(await parse(bytes, size), whole, `pieces of ${size}`);
  });

  it('refuses bytes that are not UTF-8, and an unclosed quote, as 422s on file', async () => {
    await assert.rejects(
      parse(Buffer.from([0x61, 0x2c, 0xc3, 0x28, 0x0a]), 64),
      (err: unknown) => err instanceof ValidationError && /UTF-8/.test(String((err as ValidationError).fields.file)),
    );
    await assert.rejects(
      parse(Buffer.from('a,b\n"x,y\n'), 3),
      (err: unknown) => err instanceof ValidationError && /never closed/.test(String((err as ValidationError).fields.file)),
    );
  });
});

describe('file columns', () => {
  const exact = ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'];

  it('maps headers loosely by default, exactly when asked, and by field_mappings when given', () => {
    const loose = ['Item Name', 'Sale-Type Name', 'customer_group_name', 'Sell Date', 'TIMING INTERVAL', 'Quantity', 'UOM', 'Comment'];
    assert.deepEqual(columnsFor(SALES, loose, { headers_match_exactly: false, field_mappings: null }), [
      'item_name',
      'sale_type_name',
      'customer_group_name',
      'sell_date',
      'timing_interval',
      'quantity',
      'uom',
      null,
    ]);
    assert.throws(() => columnsFor(SALES, loose, { headers_match_exactly: true, field_mappings: null }), /unknown column "Item Name"/);
    assert.deepEqual(columnsFor(SALES, exact, { headers_match_exactly: true, field_mappings: null }), exact);
    assert.throws(
      () => columnsFor(SALES, [...exact, 'uom'], { headers_match_exactly: true, field_mappings: null }),
      /columns 7 and 8 both hold uom/,
    );
    assert.deepEqual(columnsFor(SALES, ['a', 'b', 'c'], { headers_match_exactly: true, field_mappings: ['quantity', null] }), [
      'quantity',
      null,
      null,
    ]);
  });
});
