/**
 * CSV files as they stream in: UTF-8 (an optional BOM), comma-separated, RFC 4180 quoting,
 * the first record the header. Records come out as arrays of cells with bounded buffering;
 * anything that makes the file unreadable is a 422 on `file`, never a 500.
 */
import { parse, type Parser } from 'csv-parse';
import { ValidationError } from '@supply/kit';
import { MAX_COLUMNS, type FileOptions } from './request';
import type { EntitySpec } from './entities';

export const fileError = (message: string) => new ValidationError({ file: [message] });

/** Describes a csv-parse failure the way a person fixing the file needs it. */
function describe(err: unknown): string {
  const e = err as { code?: string; lines?: number; message?: string };
  const where = e.lines ? ` (line ${e.lines})` : '';
  switch (e.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `The file is not valid CSV: a quoted field is never closed${where}.`;
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return `The file is not valid CSV: a closing quote is followed by other characters${where}; double a quote inside a quoted field.`;
    case 'CSV_MAX_RECORD_SIZE':
      return `The file is not valid CSV: a record is longer than 64 KB${where}.`;
    default:
      return `The file is not valid CSV${where}: ${e.message ?? 'unreadable'}.`;
  }
}

/** Feeds bytes in, takes records out; `end()` flushes the last record. */
export class CsvRecords {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private readonly parser: Parser;
  private readonly ready: string[][] = [];
  private failure: ValidationError | null = null;
  private bytes = 0;

  constructor() {
    // Both line ends, even mixed in one file (csv-parse otherwise keeps the first one it sees).
    this.parser = parse({
      bom: true,
      record_delimiter: ['\r\n', '\n'],
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: 64 * 1024,
    });
    // Spreadsheets pad cells with spaces; no field of a row means anything by them.
    this.parser.on('data', (record: string[]) => this.ready.push(record.map((cell) => cell.trim())));
    this.parser.on('error', (err) => {
      this.failure ??= fileError(describe(err));
    });
  }

  /** Parses one piece of the file; resolves with the records it completed. */
  async push(chunk: Uint8Array): Promise<string[][]> {
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw fileError(`The file must be UTF-8 encoded text; the bytes after byte ${this.bytes} are not.`);
    }
    this.bytes += chunk.length;
    if (text) await new Promise<void>((resolve) => this.parser.write(text, () => resolve()));
    return this.take();
  }

  async end(): Promise<string[][]> {
    let rest: string;
    try {
      rest = this.decoder.decode();
    } catch {
      throw fileError('The file must be UTF-8 encoded text; it ends inside a multi-byte character.');
    }
    if (rest) await new Promise<void>((resolve) => this.parser.write(rest, () => resolve()));
    await new Promise<void>((resolve) => {
      this.parser.once('end', resolve);
      this.parser.once('error', () => resolve());
      this.parser.end();
      this.parser.resume();
    });
    return this.take();
  }

  private take(): string[][] {
    if (this.failure) throw this.failure;
    return this.ready.splice(0);
  }
}

/** How a header cell names a field when headers need not match exactly: case, spaces and dashes aside. */
function looseName(cell: string): string {
  return cell
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/**
 * The row field of each column (null: ignored), from `field_mappings` when given, else from
 * the header: exactly the field names with `headers_match_exactly`, loosely otherwise.
 */
export function columnsFor(spec: EntitySpec, header: string[], options: FileOptions): Array<string | null> {
  if (header.length > MAX_COLUMNS)
    throw fileError(`The file's header row has ${header.length} columns; a file may have at most ${MAX_COLUMNS}.`);
  if (options.field_mappings) {
    if (options.field_mappings.length > header.length) {
      throw new ValidationError({
        field_mappings: [`The field_mappings field must not have more than ${header.length} items: the file has ${header.length} columns.`],
      });
    }
    return header.map((_, i) => options.field_mappings![i] ?? null);
  }
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const columns = header.map((cell, i): string | null => {
    const field = options.headers_match_exactly
      ? spec.fields.includes(cell)
        ? cell
        : null
      : (spec.fields.find((f) => f === looseName(cell)) ?? null);
    if (field === null) {
      if (options.headers_match_exactly) problems.push(`unknown column "${cell}"`);
      return null;
    }
    if (seen.has(field)) problems.push(`columns ${seen.get(field)! + 1} and ${i + 1} both hold ${field}`);
    seen.set(field, i);
    return field;
  });
  const missing = spec.required.filter((f) => !seen.has(f));
  if (missing.length > 0) problems.push(`missing ${missing.join(', ')}`);
  if (problems.length > 0) {
    const rule = options.headers_match_exactly
      ? `must be exactly the field names (${spec.fields.join(', ')}; ${spec.fields.filter((f) => !spec.required.includes(f)).join(', ') || 'none'} optional)`
      : `must name the fields ${spec.required.join(', ')}`;
    throw fileError(`The file's header row ${rule}: ${problems.join('; ')}.`);
  }
  return columns;
}

/** A file record as a row object, or null when it has another number of cells than the header. */
export function recordToRow(record: unknown[], columns: Array<string | null>): Record<string, unknown> | null {
  if (record.length !== columns.length) return null;
  const row: Record<string, unknown> = {};
  columns.forEach((field, i) => {
    if (field) row[field] = record[i];
  });
  return row;
}
