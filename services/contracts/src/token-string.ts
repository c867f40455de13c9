import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** The fixed prefix of every secret this service issues. */
export const TOKEN_PREFIX = 'spl_';
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const RANDOM_LENGTH = 40;
const SHAPE = /^([1-9][0-9]{0,15})\|spl_([A-Za-z0-9]{40})([0-9a-f]{8})$/;

export interface ParsedToken {
  id: number;
  /** Everything after the `|`: what the store keeps a sha256 of. */
  secret: string;
}

const crcHex = (random: string) => (crc32(random) >>> 0).toString(16).padStart(8, '0');

/** A new secret: `spl_` + 40 random alphanumerics + the crc32b of those 40 in hex. */
export function newSecret(): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += ALPHABET[randomInt(ALPHABET.length)];
  return `${TOKEN_PREFIX}${random}${crcHex(random)}`;
}

export function formatToken(id: number, secret: string): string {
  return `${id}|${secret}`;
}

/** Shape and checksum only, so garbage never reaches the store. Null when malformed. */
export function parseToken(raw: string): ParsedToken | null {
  const m = SHAPE.exec(raw);
  if (!m) return null;
  const id = Number(m[1]);
  if (!Number.isSafeInteger(id) || crcHex(m[2]!) !== m[3]) return null;
  return { id, secret: `${TOKEN_PREFIX}${m[2]}${m[3]}` };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
