/** Minimal RFC 4180 field handling for the one-record-per-line files of the forecast CLI. */

/** Splits one CSV line into fields, honouring double quotes; throws on an unterminated quote. */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (quoted) {
      if (c === '"') {
        if (line[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      fields.push(field);
      field = '';
    } else {
      field += c;
    }
    i++;
  }
  if (quoted) throw new SyntaxError('unterminated quoted field');
  fields.push(field);
  return fields;
}

/** Quotes a field only when it needs it. */
export function formatCsvField(value: string): string {
  return /[",\r\n]/.test(value) || value !== value.trim() ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Compact decimal text for quantities: whole numbers as is, others to 6 decimals. */
export function formatQuantity(value: number): string {
  if (Number.isInteger(value)) return String(value);
  const rounded = Math.round(value * 1e6) / 1e6;
  return String(rounded === 0 ? 0 : rounded);
}
