// Every current-API operation of the OpenAPI document has at least one curl example in the
// "## curl examples" of docs/<area>.md, the blocks tests/e2e/docs-examples.test.ts runs.
// Matched by method and path template: a literal segment of the example matches the same
// literal or a path parameter, a shell variable (`$JOB`) only a path parameter.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '@supply/gateway';
import { shBlocks } from '../support/doc-blocks';

const DOCS = new URL('../../docs/', import.meta.url).pathname;
const HEADING = '## curl examples';
type Json = Record<string, any>;

/** `for r in a b c; do BODY done` with a plain word list, unrolled (`$r` in BODY replaced). */
function unrollLoops(script: string): string {
  return script.replace(
    /^([ \t]*)for (\w+) in ([\w .-]+); do\n([\s\S]*?)\n\1done$/gm,
    (_all, _indent, name: string, words: string, body: string) =>
      words
        .trim()
        .split(/\s+/)
        .map((word) => body.replace(new RegExp(`\\$\\{?${name}\\b\\}?`, 'g'), word))
        .join('\n'),
  );
}

/** The words of each curl command in `script`, quotes removed, up to its end (`|`, `;`, `)`, `&`, a newline). */
export function curlCommands(script: string): string[][] {
  const commands: string[][] = [];
  const text = unrollLoops(script).replace(/\\\n/g, ' ');
  for (const start of text.matchAll(/(?:^|[\s(;|&$])curl\s/g)) {
    const words: string[] = [];
    let word = '';
    let quote: string | null = null;
    let i = start.index! + start[0].length;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (quote) {
        if (c === quote) quote = null;
        else word += c;
      } else if (c === "'" || c === '"') quote = c;
      else if (/[|;)&\n]/.test(c)) break;
      else if (/\s/.test(c)) {
        if (word) words.push(word);
        word = '';
      } else word += c;
    }
    if (word) words.push(word);
    commands.push(words);
  }
  return commands;
}

/** Method and path of a curl command against `$API`, or null for one that is not. */
export function requestOf(words: string[]): { method: string; path: string } | null {
  const url = words.find((w) => /^\$\{?API\b\}?\//.test(w));
  if (!url) return null;
  let method: string | null = null;
  let sendsBody = false;
  words.forEach((w, i) => {
    if (w === '-X' || w === '--request') method = words[i + 1]!.toUpperCase();
    else if (/^-X[A-Z]+$/.test(w)) method = w.slice(2);
    else if (/^(-d|-F|--data(-\w+)?|--form(-string)?|--json)$/.test(w)) sendsBody = true;
    else if (w === '-I' || w === '--head') method = 'HEAD';
  });
  const path = url.replace(/^\$\{?API\b\}?/, '').split(/[?#]/)[0]!;
  return { method: method ?? (sendsBody ? 'POST' : 'GET'), path };
}

/** Whether a documented path (`/demo/api/v1/jobs/$JOB`) is an instance of `template`. */
function matches(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.split('/');
  if (t.length !== p.length) return false;
  return t.every((seg, i) => {
    const actual = p[i]!;
    if (/^\{\w+\}$/.test(seg)) return actual.length > 0;
    return actual === seg;
  });
}

describe('docs: curl examples cover the API', () => {
  const doc = openApiDocument() as Json;
  const current = Object.entries(doc.paths as Record<string, Json>).flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([, op]) => !op.deprecated)
      .map(([method, op]) => ({ method: method.toUpperCase(), template, operationId: op.operationId as string })),
  );
  const documented = readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .flatMap((f) => {
      const md = readFileSync(join(DOCS, f), 'utf8');
      if (!md.includes(`\n${HEADING}\n`)) return [];
      return shBlocks(md, HEADING)
        .flatMap(curlCommands)
        .map(requestOf)
        .filter((r): r is { method: string; path: string } => r !== null)
        .map((r) => ({ ...r, file: f }));
    });

  it('reads method and path of the curl examples (loops unrolled, variables kept as segments)', () => {
    const script = [
      'for r in uoms items; do',
      '  curl -s "$API/demo/api/v1/$r?per_page=2" -H "Authorization: Bearer $TOKEN"; echo',
      'done',
      "JOB=$(curl -s -X POST $API/demo/api/v1/sales -H 'Accept: application/json' \\",
      '  -d \'{"payload":[\',',
      "     1]}' | job_of)",
      'curl -s -X DELETE $API/demo/api/v1/tokens/$ID -w "%{http_code}"',
      'curl -s $API/demo/api/v1/items -F file=@x.csv',
    ].join('\n');
    assert.deepEqual(curlCommands(script).map(requestOf), [
      { method: 'GET', path: '/demo/api/v1/uoms' },
      { method: 'GET', path: '/demo/api/v1/items' },
      { method: 'POST', path: '/demo/api/v1/sales' },
      { method: 'DELETE', path: '/demo/api/v1/tokens/$ID' },
      { method: 'POST', path: '/demo/api/v1/items' },
    ]);
    assert.ok(matches('/{tenant}/api/v1/jobs/{job_id}', '/demo/api/v1/jobs/$JOB'));
    assert.ok(!matches('/{tenant}/api/v1/jobs/{job_id}', '/demo/api/v1/jobs'));
    assert.ok(!matches('/{tenant}/api/v1/tokens/provision', '/demo/api/v1/tokens/$ID'));
  });

  it('has a curl example for every current-API operation (method + path template)', () => {
    assert.ok(current.length >= 55, `only ${current.length} operations`);
    assert.ok(documented.length > 50, `only ${documented.length} examples`);
    const missing = current.filter((op) => !documented.some((d) => d.method === op.method && matches(op.template, d.path)));
    assert.deepEqual(
      missing.map((op) => `${op.operationId}: ${op.method} ${op.template}`),
      [],
      'operations without a curl example in docs/<area>.md',
    );
  });
});
