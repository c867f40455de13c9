import { recordToRow } from './csv';
import type { EntitySpec } from './entities';
import { nameKey } from './rows';
import { markChunkDuplicates, stagedChunks, type Staging } from './staging';

/** A row's key from its raw fields, or null when a key field is missing or not a string (the row fails its own checks). */
function rawKey(spec: EntitySpec, row: unknown): string | null {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return null;
  const values: string[] = [];
  for (const field of spec.keyFields) {
    const value = (row as Record<string, unknown>)[field] ?? '';
    if (typeof value !== 'string' || (value === '' && spec.required.includes(field))) return null;
    values.push(nameKey(value));
  }
  return values.join('\u0000');
}

/**
 * Marks each row that repeats the key of an earlier row of the same load, on the chunk
 * that holds it (the worker reports it as an error). Holds one entry per distinct key,
 * which the request limits bound (10,000 JSON rows, a 10240 KB file).
 */
export async function markDuplicates(
  staging: Staging,
  spec: EntitySpec,
  upload: string,
  chunks: number,
  columns: Array<string | null> | null,
): Promise<number> {
  const firstAt = new Map<string, number>();
  let marked = 0;
  for await (const chunk of stagedChunks(staging, upload, chunks)) {
    const duplicates: Array<[number, number]> = [];
    chunk.rows.forEach((raw, i) => {
      const key = rawKey(spec, columns ? recordToRow(raw as unknown[], columns) : raw);
      if (key === null) return;
      const position = chunk.first_row + i;
      const earlier = firstAt.get(key);
      if (earlier === undefined) firstAt.set(key, position);
      else duplicates.push([position, earlier]);
    });
    if (duplicates.length > 0) {
      await markChunkDuplicates(staging, chunk._id, duplicates);
      marked += duplicates.length;
    }
  }
  return marked;
}
