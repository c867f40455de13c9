/**
 * Order-preserving binary encoding of document values, so LMDB's byte order equals
 * MongoDB's sort order: missing/null < numbers < strings < objects < arrays < booleans.
 * Each encoded value is prefix-free (a complete encoding is never the start of another),
 * which lets a descending component be stored as its bitwise inverse and lets
 * `prefix + 0xFF` bound "every key that starts with this prefix".
 */
import { AppError } from '../errors';

export const RANK_EMPTY_ARRAY = 0x05;
export const RANK_NULL = 0x10;
export const RANK_NUMBER = 0x20;
export const RANK_STRING = 0x30;
export const RANK_OBJECT = 0x40;
export const RANK_ARRAY = 0x50;
export const RANK_BOOLEAN = 0x60;
export const RANK_DATE = 0x70;

/** Appended to a key prefix it sorts after every key that extends that prefix. */
export const AFTER_PREFIX = 0xff;

const END_OF_CONTAINER = 0x00;
const STRING_TERMINATOR = [0x00, 0x00] as const;
const ESCAPED_ZERO_BYTE = [0x00, 0xff] as const;

/** Growable byte buffer for building keys without intermediate allocations. */
export class KeyBuilder {
  private buffer: Buffer;
  private length = 0;
  private readonly scratch = Buffer.allocUnsafe(8);

  constructor(initialSize = 128) {
    this.buffer = Buffer.allocUnsafe(initialSize);
  }

  static from(prefix: Buffer): KeyBuilder {
    const builder = new KeyBuilder(Math.max(128, prefix.length * 2));
    builder.bytes(prefix);
    return builder;
  }

  get size(): number {
    return this.length;
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + extra));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  byte(value: number): this {
    this.reserve(1);
    this.buffer[this.length++] = value;
    return this;
  }

  bytes(source: Uint8Array): this {
    this.reserve(source.length);
    this.buffer.set(source, this.length);
    this.length += source.length;
    return this;
  }

  /** Appends `value` in ascending order, or descending (bitwise inverted) when `direction` is -1. */
  value(value: unknown, direction: 1 | -1 = 1): this {
    const start = this.length;
    this.ascending(value);
    if (direction === -1) {
      for (let i = start; i < this.length; i++) this.buffer[i] = ~this.buffer[i]! & 0xff;
    }
    return this;
  }

  private ascending(value: unknown): void {
    if (value === null || value === undefined) {
      this.byte(RANK_NULL);
    } else if (typeof value === 'number') {
      this.byte(RANK_NUMBER);
      this.number(value);
    } else if (typeof value === 'string') {
      this.byte(RANK_STRING);
      this.string(value);
    } else if (typeof value === 'boolean') {
      this.byte(RANK_BOOLEAN).byte(value ? 0x02 : 0x01);
    } else if (Array.isArray(value)) {
      if (value.length === 0) {
        this.byte(RANK_EMPTY_ARRAY);
        return;
      }
      this.byte(RANK_ARRAY);
      for (const element of value) this.ascending(element);
      this.byte(END_OF_CONTAINER);
    } else if (value instanceof Date) {
      this.byte(RANK_DATE);
      this.number(value.getTime());
    } else if (typeof value === 'object') {
      this.byte(RANK_OBJECT);
      for (const [field, fieldValue] of Object.entries(value)) {
        if (fieldValue === undefined) continue;
        this.byte(RANK_STRING);
        this.string(field);
        this.ascending(fieldValue);
      }
      this.byte(END_OF_CONTAINER);
    } else {
      throw new AppError('invalid_argument', `Unsupported value type in document: ${typeof value}.`);
    }
  }

  /** IEEE-754 big-endian with the sign bit flipped (positives) or all bits inverted (negatives). */
  private number(value: number): void {
    this.reserve(8);
    if (Number.isNaN(value)) {
      this.buffer.fill(0, this.length, this.length + 8);
    } else {
      this.scratch.writeDoubleBE(value === 0 ? 0 : value, 0);
      if (this.scratch[0]! & 0x80) {
        for (let i = 0; i < 8; i++) this.buffer[this.length + i] = ~this.scratch[i]! & 0xff;
      } else {
        this.scratch.copy(this.buffer, this.length);
        this.buffer[this.length] = this.buffer[this.length]! | 0x80;
      }
    }
    this.length += 8;
  }

  /** UTF-8 (byte order = MongoDB's simple collation) with 0x00 escaped, then a terminator. */
  private string(value: string): void {
    this.reserve(value.length * 3 + 2);
    const start = this.length;
    this.length += this.buffer.write(value, start, 'utf8');
    if (value.includes('\u0000')) {
      const raw = Buffer.from(this.buffer.subarray(start, this.length));
      this.length = start;
      for (const byte of raw) {
        if (byte === 0) this.bytes(Buffer.from(ESCAPED_ZERO_BYTE));
        else this.byte(byte);
      }
    }
    this.byte(STRING_TERMINATOR[0]).byte(STRING_TERMINATOR[1]);
  }

  /** A copy of the bytes written so far; the builder stays usable. */
  toBuffer(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.length));
  }

  /** Truncates back to `size` bytes so a shared prefix can be reused. */
  truncate(size: number): this {
    this.length = size;
    return this;
  }
}

/** Encodes one value on its own (ascending). */
export function encodeValue(value: unknown, direction: 1 | -1 = 1): Buffer {
  return new KeyBuilder(32).value(value, direction).toBuffer();
}

/** Encodes a sequence of strings (e.g. collection + index name) as a key prefix. */
export function encodePrefix(...parts: string[]): Buffer {
  const builder = new KeyBuilder(64);
  for (const part of parts) builder.value(part);
  return builder.toBuffer();
}

export function withSuffix(prefix: Buffer, ...suffix: number[]): Buffer {
  return Buffer.concat([prefix, Buffer.from(suffix)]);
}

/** Scalars are the only values the planner seeks on; everything else is left to the residual filter. */
export function isScalar(value: unknown): value is string | number | boolean | null {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The type rank byte a scalar's encoding starts with. */
export function rankOf(value: string | number | boolean | null): number {
  if (value === null) return RANK_NULL;
  if (typeof value === 'number') return RANK_NUMBER;
  if (typeof value === 'string') return RANK_STRING;
  return RANK_BOOLEAN;
}

/**
 * Every value reachable at a dotted path, MongoDB style: arrays met on the way are
 * traversed element by element, and a numeric segment also indexes into an array.
 * `multi` is true when an array was traversed or the leaf is an array.
 */
export function valuesAtPath(document: unknown, segments: readonly string[]): { values: unknown[]; multi: boolean } {
  const found: { values: unknown[]; multi: boolean } = { values: [], multi: false };
  collectAtPath(document, segments, 0, found);
  return found;
}

/** valuesAtPath's walk, a plain function rather than a closure made on every call (this runs for every index entry written). */
function collectAtPath(current: unknown, segments: readonly string[], depth: number, found: { values: unknown[]; multi: boolean }): void {
  if (depth === segments.length) {
    if (Array.isArray(current)) {
      found.multi = true;
      if (current.length === 0) found.values.push(current);
      else found.values.push(...current);
    } else {
      found.values.push(current);
    }
    return;
  }
  if (current === null || typeof current !== 'object') {
    found.values.push(undefined);
    return;
  }
  const segment = segments[depth]!;
  if (Array.isArray(current)) {
    found.multi = true;
    if (/^\d+$/.test(segment)) {
      collectAtPath(current[Number(segment)], segments, depth + 1, found);
      return;
    }
    if (current.length === 0) found.values.push(undefined);
    for (const element of current) collectAtPath(element, segments, depth, found);
    return;
  }
  collectAtPath((current as Record<string, unknown>)[segment], segments, depth + 1, found);
}

/**
 * The value MongoDB sorts a document by for one sort key: the field itself, or for an
 * array the smallest element ascending / largest descending; encoded ascending.
 */
export function sortComponent(document: unknown, segments: readonly string[], direction: 1 | -1): Buffer {
  const { values, multi } = valuesAtPath(document, segments);
  if (!multi) return encodeValue(values[0]);
  let best: Buffer | undefined;
  for (const value of values) {
    const encoded = encodeValue(value);
    if (best === undefined || Buffer.compare(encoded, best) * direction < 0) best = encoded;
  }
  return best ?? encodeValue(undefined);
}
