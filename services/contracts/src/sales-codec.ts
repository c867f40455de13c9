/**
 * A hand-written protobuf codec for QuerySalesResponse, the hot read (cursor pages of up to
 * 5,000 sales records). It writes exactly the bytes the generated encoder writes (fields in
 * number order, defaults left out) without a writer fork, a TextEncoder array per string or
 * an int64 conversion per id, and reads any valid encoding of the message (unknown fields
 * skipped). Whatever it does not handle itself (an id that is negative or past 2^53 - 1, a
 * malformed message) goes to the generated code, so results and errors stay the generated
 * ones. sales-codec.test.ts holds both to the same bytes and values.
 */
import { PageInfo, QuerySalesResponse, TransactionalServiceService, type SalesRecord } from './gen/supply/transactional/v1/transactional';

/** Thrown inside the fast paths to hand a message to the generated code. */
class Unhandled extends Error {}
const UNHANDLED = new Unhandled();

// ---------------------------------------------------------------- encoding

/** Bytes of `value` as a varint, for non-negative safe integers. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** UTF-8 length of `s` (s.length when it is ASCII, the common case). */
function utf8Size(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8');
  return s.length;
}

const ID_FIELDS = ['id', 'item_customer_group_id', 'item_id', 'customer_group_id', 'sale_type_id', 'timing_interval_id', 'uom_id'] as const;

function idSize(value: number): number {
  if (value === 0) return 0;
  if (!(value > 0 && Number.isSafeInteger(value))) throw UNHANDLED;
  return 1 + varintSize(value);
}

function stringSize(tagSize: number, s: string): number {
  if (typeof s !== 'string') throw UNHANDLED;
  if (s === '') return 0;
  const n = utf8Size(s);
  return tagSize + varintSize(n) + n;
}

function recordSize(r: SalesRecord): number {
  for (const field of ID_FIELDS) if (typeof r[field] !== 'number') throw UNHANDLED;
  if (typeof r.quantity !== 'number' || !Array.isArray(r.item_hierarchy) || !Array.isArray(r.customer_group_hierarchy)) throw UNHANDLED;
  for (const v of r.item_hierarchy) if (typeof v !== 'string') throw UNHANDLED;
  for (const v of r.customer_group_hierarchy) if (typeof v !== 'string') throw UNHANDLED;
  let size =
    idSize(r.id) +
    idSize(r.item_customer_group_id) +
    idSize(r.item_id) +
    stringSize(1, r.item_name) +
    idSize(r.customer_group_id) +
    stringSize(1, r.customer_group_name) +
    idSize(r.sale_type_id) +
    stringSize(1, r.sale_type_name) +
    idSize(r.timing_interval_id) +
    stringSize(1, r.timing_interval_span) +
    idSize(r.uom_id) +
    stringSize(1, r.uom_name) +
    stringSize(1, r.uom_abbr) +
    stringSize(1, r.sell_date) +
    (r.quantity !== 0 ? 9 : 0) +
    stringSize(2, r.created_at) +
    stringSize(2, r.updated_at);
  // Repeated strings are written even when empty.
  for (const v of r.item_hierarchy) size += 2 + varintSize(utf8Size(v)) + utf8Size(v);
  for (const v of r.customer_group_hierarchy) size += 2 + varintSize(utf8Size(v)) + utf8Size(v);
  return size;
}

class Out {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(value: number): void {
    const buf = this.buf;
    while (value >= 128) {
      buf[this.pos++] = (value % 128) | 128;
      value = Math.floor(value / 128);
    }
    buf[this.pos++] = value;
  }

  id(tag: number, value: number): void {
    if (value === 0) return;
    this.buf[this.pos++] = tag;
    this.varint(value);
  }

  /** A string field, also when empty (repeated values). */
  stringAlways(tag: number, s: string): void {
    const buf = this.buf;
    if (tag >= 128) {
      buf[this.pos++] = (tag % 128) | 128;
      buf[this.pos++] = tag >>> 7;
    } else {
      buf[this.pos++] = tag;
    }
    const n = utf8Size(s);
    this.varint(n);
    if (n === s.length) {
      let pos = this.pos;
      for (let i = 0; i < n; i++) buf[pos++] = s.charCodeAt(i);
      this.pos = pos;
    } else {
      this.pos += buf.write(s, this.pos, 'utf8');
    }
  }

  string(tag: number, s: string): void {
    if (s !== '') this.stringAlways(tag, s);
  }
}

function writeRecord(out: Out, r: SalesRecord): void {
  out.id(8, r.id);
  out.id(16, r.item_customer_group_id);
  out.id(24, r.item_id);
  out.string(34, r.item_name);
  out.id(40, r.customer_group_id);
  out.string(50, r.customer_group_name);
  out.id(56, r.sale_type_id);
  out.string(66, r.sale_type_name);
  out.id(72, r.timing_interval_id);
  out.string(82, r.timing_interval_span);
  out.id(88, r.uom_id);
  out.string(98, r.uom_name);
  out.string(106, r.uom_abbr);
  out.string(114, r.sell_date);
  if (r.quantity !== 0) {
    out.buf[out.pos++] = 121;
    out.buf.writeDoubleLE(r.quantity, out.pos);
    out.pos += 8;
  }
  out.string(130, r.created_at);
  out.string(138, r.updated_at);
  for (const v of r.item_hierarchy) out.stringAlways(146, v);
  for (const v of r.customer_group_hierarchy) out.stringAlways(154, v);
}

/** The bytes QuerySalesResponse.encode(message).finish() gives. */
export function encodeQuerySalesResponse(message: QuerySalesResponse): Buffer {
  let sizes: Int32Array;
  let total = 0;
  try {
    sizes = new Int32Array(message.records.length);
    for (let i = 0; i < message.records.length; i++) {
      const size = recordSize(message.records[i]!);
      sizes[i] = size;
      total += 1 + varintSize(size) + size;
    }
  } catch (err) {
    if (err !== UNHANDLED) throw err;
    return Buffer.from(QuerySalesResponse.encode(message).finish());
  }
  for (const v of [...message.item_levels, ...message.customer_group_levels]) {
    if (typeof v !== 'string') return Buffer.from(QuerySalesResponse.encode(message).finish());
  }
  const page = message.page === undefined ? undefined : PageInfo.encode(message.page).finish();
  if (page) total += 1 + varintSize(page.length) + page.length;
  for (const v of message.item_levels) total += 1 + varintSize(utf8Size(v)) + utf8Size(v);
  for (const v of message.customer_group_levels) total += 1 + varintSize(utf8Size(v)) + utf8Size(v);

  const out = new Out(Buffer.allocUnsafe(total));
  for (let i = 0; i < message.records.length; i++) {
    out.buf[out.pos++] = 10;
    out.varint(sizes[i]!);
    writeRecord(out, message.records[i]!);
  }
  if (page) {
    out.buf[out.pos++] = 18;
    out.varint(page.length);
    out.buf.set(page, out.pos);
    out.pos += page.length;
  }
  for (const v of message.item_levels) out.stringAlways(26, v);
  for (const v of message.customer_group_levels) out.stringAlways(34, v);
  if (out.pos !== total) throw new Error(`QuerySalesResponse encoding wrote ${out.pos} bytes of ${total}`);
  return out.buf;
}

// ---------------------------------------------------------------- decoding

/** Node's Buffer has it (toString('latin1') without the argument checks); @types/node does not declare it. */
type LatinSlicing = Buffer & { latin1Slice(start: number, end: number): string };

class In {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  /** A varint as a number; past 2^53 - 1 (or a negative int64) is the generated code's to read. */
  varint(): number {
    const buf = this.buf;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= buf.length) throw UNHANDLED;
      const byte = buf[this.pos++]!;
      value += (byte & 127) * scale;
      if (byte < 128) {
        if (value > Number.MAX_SAFE_INTEGER) throw UNHANDLED;
        return value;
      }
      scale *= 128;
    }
    throw UNHANDLED;
  }

  string(): string {
    const n = this.varint();
    const start = this.pos;
    const end = start + n;
    if (end > this.buf.length) throw UNHANDLED;
    this.pos = end;
    const buf = this.buf;
    for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return buf.toString('utf8', start, end);
    return (buf as LatinSlicing).latin1Slice(start, end);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        while (this.pos < this.buf.length && this.buf[this.pos]! >= 128) this.pos++;
        this.pos++;
        break;
      case 1:
        this.pos += 8;
        break;
      case 2: {
        const n = this.varint();
        this.pos += n;
        break;
      }
      case 5:
        this.pos += 4;
        break;
      default:
        throw UNHANDLED;
    }
    if (this.pos > this.buf.length) throw UNHANDLED;
  }
}

function readRecord(input: In, end: number): SalesRecord {
  const r: SalesRecord = {
    id: 0,
    item_customer_group_id: 0,
    item_id: 0,
    item_name: '',
    customer_group_id: 0,
    customer_group_name: '',
    sale_type_id: 0,
    sale_type_name: '',
    timing_interval_id: 0,
    timing_interval_span: '',
    uom_id: 0,
    uom_name: '',
    uom_abbr: '',
    sell_date: '',
    quantity: 0,
    created_at: '',
    updated_at: '',
    item_hierarchy: [],
    customer_group_hierarchy: [],
  };
  while (input.pos < end) {
    const tag = input.varint();
    switch (tag) {
      case 8:
        r.id = input.varint();
        break;
      case 16:
        r.item_customer_group_id = input.varint();
        break;
      case 24:
        r.item_id = input.varint();
        break;
      case 34:
        r.item_name = input.string();
        break;
      case 40:
        r.customer_group_id = input.varint();
        break;
      case 50:
        r.customer_group_name = input.string();
        break;
      case 56:
        r.sale_type_id = input.varint();
        break;
      case 66:
        r.sale_type_name = input.string();
        break;
      case 72:
        r.timing_interval_id = input.varint();
        break;
      case 82:
        r.timing_interval_span = input.string();
        break;
      case 88:
        r.uom_id = input.varint();
        break;
      case 98:
        r.uom_name = input.string();
        break;
      case 106:
        r.uom_abbr = input.string();
        break;
      case 114:
        r.sell_date = input.string();
        break;
      case 121:
        if (input.pos + 8 > end) throw UNHANDLED;
        r.quantity = input.buf.readDoubleLE(input.pos);
        input.pos += 8;
        break;
      case 130:
        r.created_at = input.string();
        break;
      case 138:
        r.updated_at = input.string();
        break;
      case 146:
        r.item_hierarchy.push(input.string());
        break;
      case 154:
        r.customer_group_hierarchy.push(input.string());
        break;
      default:
        // A group end or tag 0 ends the message for the generated code too: leave such input to it.
        if ((tag & 7) === 4 || tag === 0) throw UNHANDLED;
        input.skip(tag & 7);
    }
  }
  if (input.pos !== end) throw UNHANDLED;
  return r;
}

/** What QuerySalesResponse.decode(bytes) gives. */
export function decodeQuerySalesResponse(bytes: Buffer): QuerySalesResponse {
  try {
    const input = new In(bytes);
    const message: QuerySalesResponse = { records: [], page: undefined, item_levels: [], customer_group_levels: [] };
    while (input.pos < bytes.length) {
      const tag = input.varint();
      if (tag === 10) {
        const end = input.varint() + input.pos;
        if (end > bytes.length) throw UNHANDLED;
        message.records.push(readRecord(input, end));
      } else if (tag === 18) {
        const n = input.varint();
        if (input.pos + n > bytes.length) throw UNHANDLED;
        message.page = PageInfo.decode(bytes.subarray(input.pos, input.pos + n));
        input.pos += n;
      } else if (tag === 26) {
        message.item_levels.push(input.string());
      } else if (tag === 34) {
        message.customer_group_levels.push(input.string());
      } else {
        if ((tag & 7) === 4 || tag === 0) throw UNHANDLED;
        input.skip(tag & 7);
      }
    }
    return message;
  } catch (err) {
    if (err !== UNHANDLED) throw err;
    return QuerySalesResponse.decode(bytes);
  }
}

/**
 * The transactional service's definition with the codec above on QuerySales; the service
 * and its clients use it in place of the generated TransactionalServiceService.
 */
export const TransactionalService = {
  ...TransactionalServiceService,
  querySales: {
    ...TransactionalServiceService.querySales,
    responseSerialize: encodeQuerySalesResponse,
    responseDeserialize: decodeQuerySalesResponse,
  },
} as const satisfies typeof TransactionalServiceService;
