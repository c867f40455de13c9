/**
 * Opaque, signed cursors for keyset reads: a cursor says "the page after (or before) this
 * position" and is only good for the query it came from, so a client can neither forge a
 * position nor carry a cursor over to another query.
 *
 * Form: `<payload>.<mac>`, both base64url. The payload is JSON `{"d":"n"|"p","p":<position>}`
 * where the position is the service's own keyset position (a JSON array of sort values).
 * The MAC is HMAC-SHA256 over a binding of the query (resource, tenant, filters, sort) and
 * the payload, so a changed byte, another filter, another sort, another endpoint or another
 * tenant all fail verification alike: 422 on `cursor`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, ValidationError } from '@supply/kit';

export type CursorDirection = 'next' | 'prev';

export interface DecodedCursor {
  direction: CursorDirection;
  /** The keyset position to read after (`next`) or before (`prev`). */
  position: string;
}

export interface CursorCodec {
  encode(binding: string, direction: CursorDirection, position: string): string;
  /** Throws a 422 on `cursor` unless `cursor` was signed for exactly this binding. */
  decode(binding: string, cursor: string): DecodedCursor;
}

const VERSION = 'supply-cursor-v1';
const INVALID = 'The cursor is invalid or belongs to another query.';

/** The query a cursor is bound to, canonically serialised (key order does not matter). */
export function cursorBinding(parts: Record<string, unknown>): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
      );
    }
    return value;
  };
  return JSON.stringify(canonical(parts));
}

export function cursorCodec(secret: string | undefined): CursorCodec {
  const key = () => {
    if (!secret || secret.length < 32) throw new AppError('internal', 'No cursor secret is configured.');
    return secret;
  };
  const mac = (binding: string, payload: string) => createHmac('sha256', key()).update(`${VERSION}\n${binding}\n${payload}`).digest();
  const invalid = () => new ValidationError({ cursor: [INVALID] });

  return {
    encode(binding, direction, position) {
      const payload = Buffer.from(JSON.stringify({ d: direction === 'next' ? 'n' : 'p', p: position })).toString('base64url');
      return `${payload}.${mac(binding, payload).toString('base64url')}`;
    },
    decode(binding, cursor) {
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) throw invalid();
      // Compared as text: decoding would ignore the padding bits of the last character,
      // so a cursor with that character changed would still pass.
      const presented = Buffer.from(signature);
      const expected = Buffer.from(mac(binding, payload).toString('base64url'));
      if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) throw invalid();
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      const { d, p } = (decoded ?? {}) as { d?: unknown; p?: unknown };
      if ((d !== 'n' && d !== 'p') || typeof p !== 'string') throw invalid();
      return { direction: d === 'n' ? 'next' : 'prev', position: p };
    },
  };
}
