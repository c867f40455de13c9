/**
 * Hostile request classes: each rewrites a generated request of an operation into one that
 * probes a known way to break a server (prototype keys, malformed escapes, unsafe integers,
 * deep nesting, lying headers, oversize values, impossible tenants, array indexes as sizes).
 */
import fc from 'fast-check';
import { JsonObject, RawJson, toJson } from './json';
import { multipartBody, type Draft, type Operation } from './openapi';

export type HostileClassId =
  | 'proto-keys-body'
  | 'proto-keys-query'
  | 'bad-percent-path'
  | 'unsafe-integer-path'
  | 'unsafe-integer-query'
  | 'deep-json'
  | 'wrong-content-type'
  | 'bogus-content-encoding'
  | 'hostile-tenant'
  | 'overlong-values'
  | 'top-level-non-object'
  | 'multipart-hostile'
  | 'hostile-headers'
  | 'odd-query-shapes'
  | 'odd-json-text';

export interface HostileClass {
  id: HostileClassId;
  applies(op: Operation): boolean;
  rewrite(d: Draft): fc.Arbitrary<Draft>;
}

export const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf'] as const;
export const BAD_ESCAPES = ['%ff', '%', '%zz', '%e0%80', '%c0%af', '%ed%a0%80', 'a%', '%%'] as const;
export const UNSAFE_INTEGERS = [
  '9007199254740993',
  '99999999999999999999',
  '1e400',
  '-1',
  '0',
  '1.5',
  '0x10',
  '1e3',
  '-0',
  '00001',
  'NaN',
  'Infinity',
  '%EF%BC%91',
] as const;

const takesJson = (op: Operation) => Boolean(op.body?.contentTypes.some((t) => t.includes('json')));
const hasBody = (op: Operation) => Boolean(op.body);
const hasQuery = (op: Operation) => op.params.some((p) => p.in === 'query');
const pathIds = (op: Operation) => op.params.filter((p) => p.in === 'path' && p.name !== 'tenant').map((p) => p.name);
const jsonValueOf = (d: Draft) => (d.body && 'value' in d.body ? d.body.value : {});
const withJson = (d: Draft, value: unknown, kind: string): Draft => ({
  ...d,
  kind,
  body: { raw: toJson(value), contentType: 'application/json' },
});

/** Adds prototype-named keys at the top level, or inside the first nested object. */
function withProtoKeys(value: unknown, key: string, inner: unknown, nested: boolean): unknown {
  if (value === null || typeof value !== 'object') return new JsonObject([[key, inner]]);
  if (Array.isArray(value))
    return value.length ? [withProtoKeys(value[0], key, inner, nested), ...value.slice(1)] : [new JsonObject([[key, inner]])];
  const entries = Object.entries(value as Record<string, unknown>);
  if (nested) {
    const i = entries.findIndex(([, v]) => v !== null && typeof v === 'object');
    if (i >= 0) {
      entries[i] = [entries[i]![0], withProtoKeys(entries[i]![1], key, inner, false)];
      return new JsonObject(entries);
    }
  }
  return new JsonObject([...entries, [key, inner]]);
}

function nested(depth: number, kind: 'array' | 'object' | 'mixed'): string {
  const open = kind === 'array' ? '[' : kind === 'object' ? '{"a":' : '[{"a":';
  const close = kind === 'array' ? ']' : kind === 'object' ? '}' : '}]';
  const reps = kind === 'mixed' ? Math.ceil(depth / 2) : depth;
  return open.repeat(reps) + '1' + close.repeat(reps);
}

export const HOSTILE_CLASSES: HostileClass[] = [
  {
    id: 'proto-keys-body',
    applies: takesJson,
    rewrite: (d) =>
      fc
        .record({
          key: fc.constantFrom(...PROTO_KEYS),
          inner: fc.constantFrom<unknown>(1, 'x', null, {}, { polluted: true }, new JsonObject([['__proto__', { admin: true }]])),
          nested: fc.boolean(),
        })
        .map(({ key, inner, nested: deep }) => withJson(d, withProtoKeys(jsonValueOf(d), key, inner, deep), 'proto-keys-body')),
  },
  {
    id: 'proto-keys-query',
    applies: (op) => !op.page,
    rewrite: (d) =>
      fc
        .record({
          key: fc.constantFrom(...PROTO_KEYS),
          shape: fc.constantFrom('filter[K]', 'K', 'K[x]', 'filter[K][x]', 'sort', 'include', 'K[]'),
          value: fc.constantFrom('1', 'x', '', 'constructor', '__proto__'),
        })
        .map(({ key, shape, value }) => {
          const name = shape === 'sort' || shape === 'include' ? shape : shape.replace('K', key);
          return {
            ...d,
            kind: 'proto-keys-query',
            query: [...d.query, [name, shape === 'sort' || shape === 'include' ? key : value] as [string, string]],
          };
        }),
  },
  {
    id: 'bad-percent-path',
    applies: () => true,
    rewrite: (d) =>
      fc
        .record({ escape: fc.constantFrom(...BAD_ESCAPES), which: fc.constantFrom('tenant', ...pathIds(d.op)) })
        .map(({ escape, which }) => ({
          ...d,
          kind: 'bad-percent-path',
          pathValues: { ...d.pathValues, [which]: escape },
        })),
  },
  {
    id: 'unsafe-integer-path',
    applies: (op) => pathIds(op).length > 0,
    rewrite: (d) =>
      fc.record({ value: fc.constantFrom(...UNSAFE_INTEGERS), which: fc.constantFrom(...pathIds(d.op)) }).map(({ value, which }) => ({
        ...d,
        kind: 'unsafe-integer-path',
        pathValues: { ...d.pathValues, [which]: value },
      })),
  },
  {
    id: 'unsafe-integer-query',
    applies: hasQuery,
    rewrite: (d) => {
      const names = d.op.params.filter((p) => p.in === 'query').map((p) => p.name);
      return fc
        .record({ value: fc.constantFrom(...UNSAFE_INTEGERS, '1'.repeat(400)), name: fc.constantFrom(...names) })
        .map(({ value, name }) => ({
          ...d,
          kind: 'unsafe-integer-query',
          query: [
            ...d.query.filter(([k]) => k !== name),
            [name, decodeURIComponent(value.replace(/%(?![0-9A-F]{2})/gi, '%25'))] as [string, string],
          ],
        }));
    },
  },
  {
    id: 'deep-json',
    applies: takesJson,
    rewrite: (d) =>
      fc
        .record({
          depth: fc.constantFrom(65, 200, 1000, 5000, 20000),
          kind: fc.constantFrom('array', 'object', 'mixed' as const),
          inField: fc.boolean(),
        })
        .map(({ depth, kind, inField }) => {
          const deep = nested(depth, kind);
          const value = jsonValueOf(d);
          const text =
            inField && value !== null && typeof value === 'object' && !Array.isArray(value)
              ? toJson(new JsonObject([...Object.entries(value as object), ['deep', new RawJson(deep)]]))
              : deep;
          return { ...d, kind: 'deep-json', body: { raw: text, contentType: 'application/json' } };
        }),
  },
  {
    id: 'wrong-content-type',
    applies: hasBody,
    rewrite: (d) =>
      fc
        .constantFrom(
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
          'multipart/form-data; boundary=',
          'application/json; charset=utf-16',
          'application/json; charset=latin-9',
          'application/*',
          '*/*',
          'jso n/;;=',
        )
        .map((contentType) => ({
          ...d,
          kind: 'wrong-content-type',
          body: { raw: d.body && 'value' in d.body ? toJson(d.body.value) : d.body && 'raw' in d.body ? d.body.raw : '{}', contentType },
          headers: { ...d.headers, 'Content-Type': contentType },
        })),
  },
  {
    id: 'bogus-content-encoding',
    applies: hasBody,
    rewrite: (d) =>
      fc.constantFrom('gzip', 'deflate', 'br', 'x-gzip', 'compress', 'identity, gzip', 'zstd').map((encoding) => ({
        ...d,
        kind: 'bogus-content-encoding',
        headers: { ...d.headers, 'Content-Encoding': encoding },
        body: d.body ?? { raw: '{}', contentType: 'application/json' },
      })),
  },
  {
    id: 'hostile-tenant',
    applies: (op) => op.template.includes('{tenant}'),
    rewrite: (d) =>
      fc
        .constantFrom(
          '%00',
          'demo%00',
          't'.repeat(3000),
          '..',
          '.',
          '%2e%2e',
          'demo%2Fapi',
          'DEMO',
          'd%C3%A9mo',
          '%F0%9F%92%A9',
          'acme',
          'closed',
          'nope',
          'demo%20',
          '%20demo',
          '__proto__',
          'constructor',
          'a'.repeat(64),
        )
        .map((tenant) => ({ ...d, kind: 'hostile-tenant', pathValues: { ...d.pathValues, tenant } })),
  },
  {
    id: 'overlong-values',
    applies: () => true,
    rewrite: (d) =>
      fc
        .record({ where: fc.constantFrom('query', 'header', 'body', 'path'), size: fc.constantFrom(256, 3000, 70_000) })
        .map(({ where, size }) => {
          const long = 'L'.repeat(size);
          if (where === 'header')
            return {
              ...d,
              kind: 'overlong-values',
              headers: { ...d.headers, 'Idempotency-Key': long.slice(0, 8000), 'X-Request-Id': long.slice(0, 8000) },
            };
          if (where === 'path' && pathIds(d.op).length)
            return { ...d, kind: 'overlong-values', pathValues: { ...d.pathValues, [pathIds(d.op)[0]!]: long.slice(0, 6000) } };
          if (where === 'body' && takesJson(d.op)) {
            const value = jsonValueOf(d);
            const obj = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
            const first = Object.keys(obj)[0] ?? 'name';
            return withJson(d, { ...obj, [first]: long }, 'overlong-values');
          }
          return {
            ...d,
            kind: 'overlong-values',
            query: [...d.query, ['filter[name]', long.slice(0, 6000)] as [string, string], ['q', long.slice(0, 3000)] as [string, string]],
          };
        }),
  },
  {
    id: 'top-level-non-object',
    applies: takesJson,
    rewrite: (d) =>
      fc
        .constantFrom('[]', '[1]', '[[]]', '[null]', 'null', '"str"', '123', 'true', '[{}]', '""')
        .map((raw) => ({ ...d, kind: 'top-level-non-object', body: { raw, contentType: 'application/json' } })),
  },
  {
    id: 'multipart-hostile',
    applies: (op) => Boolean(op.body?.contentTypes.includes('multipart/form-data')),
    rewrite: (d) =>
      fc
        .constantFrom<Array<[string, string]>>(
          [['field_mappings[99999999]', 'item_name']],
          [['field_mappings[400000000]', 'item_name']],
          [['field_mappings[-1]', 'item_name']],
          [['field_mappings[1e3]', 'item_name']],
          [['field_mappings[__proto__]', 'x']],
          [['field_mappings', '{"length":99999999}']],
          [['field_mappings', '[' + '"",'.repeat(500) + '""]']],
          [['scope[__proto__][polluted]', '1']],
          [['options[constructor][prototype][x]', '1']],
          [['a[b][c][d][e][f][g]', '1']],
          Array.from({ length: 70 }, (_, i) => [`f${i}`, 'v'] as [string, string]),
        )
        .chain((fields) =>
          fc.constantFrom('file', 'no-file', 'truncated', 'two-files').map((shape) => {
            const csv = 'item_name,location_name,inventory_date,quantity,uom\nSKU-0001,DC-East,2026-01-05,1,ea\n';
            const built = multipartBody(
              [...fields, ['dry_run', 'true']],
              shape === 'no-file' ? undefined : { name: 'f.csv', content: csv },
            );
            let raw = built.raw;
            if (shape === 'truncated') raw = raw.slice(0, Math.floor(raw.length * 0.7));
            if (shape === 'two-files')
              raw = raw.replace(
                /--\r\n$/,
                `\r\nContent-Disposition: form-data; name="file"; filename="g.csv"\r\n\r\n${csv}\r\n--${built.contentType.split('boundary=')[1]}--\r\n`,
              );
            return {
              ...d,
              kind: 'multipart-hostile',
              body: { raw, contentType: built.contentType },
              headers: { ...d.headers, 'Content-Type': built.contentType },
            };
          }),
        ),
  },
  {
    id: 'hostile-headers',
    applies: () => true,
    rewrite: (d) =>
      fc
        .constantFrom<Record<string, string>>(
          { Authorization: 'Bearer' },
          { Authorization: 'Bearer ' },
          { Authorization: 'Bearer 1|' },
          { Authorization: 'Bearer |' },
          { Authorization: `Bearer ${'9'.repeat(30)}|${'a'.repeat(40)}` },
          { Authorization: 'Bearer 9007199254740993|abc' },
          { Authorization: `Bearer ${'x'.repeat(7000)}` },
          { Authorization: 'Basic ZGVtbzpkZW1v' },
          { Authorization: 'bearer  a b c' },
          { Accept: 'text/html' },
          { Accept: '' },
          { Accept: 'application/xml' },
          { 'X-Requested-With': 'XMLHttpRequest', Accept: 'text/html' },
          { 'X-Request-Id': '../../etc/passwd' },
          { 'Idempotency-Key': ' ' },
          { 'Idempotency-Key': 'ümlaut'.replace(/[^\x20-\x7e]/g, '?') },
          { 'Content-Length': '0' },
          { Cookie: 'supply_session=%ff; supply_login=__proto__' },
          { 'X-Forwarded-For': '::ffff:256.0.0.1' },
        )
        .map((headers) => ({ ...d, kind: 'hostile-headers', headers: { ...d.headers, ...headers } })),
  },
  {
    id: 'odd-query-shapes',
    applies: (op) => !op.page,
    rewrite: (d) =>
      fc
        .constantFrom<Array<[string, string]>>(
          [
            ['page', '1'],
            ['page', '2'],
          ],
          [['per_page[]', '1']],
          [['filter', 'name']],
          [['filter[name][x]', '1']],
          [['filter[]', '1']],
          [['sort[]', 'id']],
          [['cursor', 'eyJpZCI6MX0']],
          [['cursor', '%ff']],
          [['a[b][c][d][e][f][g][h][i][j][k]', '1']],
          [['include', ',,,']],
          [['filter[sell_date_from]', '2026-02-30']],
          [['per_page', '']],
          [['page', '1e2']],
          Array.from({ length: 300 }, (_, i) => [`filter[k${i}]`, 'v'] as [string, string]),
        )
        .map((pairs) => ({ ...d, kind: 'odd-query-shapes', query: [...d.query, ...pairs] })),
  },
  {
    id: 'odd-json-text',
    applies: takesJson,
    rewrite: (d) =>
      fc
        .constantFrom(
          '{"name":"\\ud800"}',
          '{"name":"a\\u0000b","uom":"ea"}',
          '{"name":1e400}',
          '{"a":1,"a":2}',
          '{"name":"x"',
          '',
          '\ufeff{}',
          '{"name":"\u202eevil","uom":"ea"}',
          '{"quantity":-0,"mode":"standard"}',
          Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('latin1'),
        )
        .map((raw) => ({
          ...d,
          kind: 'odd-json-text',
          body: { raw: Buffer.from(raw, raw.includes('\xff') ? 'latin1' : 'utf8'), contentType: 'application/json' },
        })),
  },
];

/** Requests of one hostile class for an operation, from generated ones. */
export function hostileArb(cls: HostileClass, base: fc.Arbitrary<Draft>): fc.Arbitrary<Draft> {
  return base.chain((d) => cls.rewrite(d));
}

/**
 * One concrete request per reported hostile case (issue #14, part 3), sent as is with a
 * wide-scope token, so every class is exercised on every run whatever the generators draw.
 */
export interface HostileExample {
  /** The operation it targets (`METHOD template`), for the shape rules. */
  operation: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const json = { 'Content-Type': 'application/json' };
const protoBodies = (operation: string, method: string, path: string, base: string): HostileExample[] =>
  PROTO_KEYS.slice(0, 4).map((key) => ({
    operation,
    method,
    path,
    headers: json,
    body: `{${base}${base ? ',' : ''}"${key}":{"polluted":true}}`,
  }));

export const HOSTILE_EXAMPLES: HostileExample[] = [
  ...protoBodies('POST /{tenant}/api/v1/uoms', 'POST', '/demo/api/v1/uoms', '"name":"fuzz-proto","abbreviation":"fzp"'),
  ...protoBodies('POST /{tenant}/api/v1/items', 'POST', '/demo/api/v1/items', '"name":"fuzz-proto","uom":"ea"'),
  ...protoBodies('PATCH /{tenant}/api/v1/items/{id}', 'PATCH', '/demo/api/v1/items/1', ''),
  ...protoBodies('POST /{tenant}/api/v1/forecasts/generate', 'POST', '/demo/api/v1/forecasts/generate', '"dry_run":true'),
  ...protoBodies(
    'POST /{tenant}/api/v1/supply-plans/generate',
    'POST',
    '/demo/api/v1/supply-plans/generate',
    '"mode":"standard","item_location_id":1',
  ),
  { operation: 'GET /{tenant}/api/v1/uoms', method: 'GET', path: '/demo/api/v1/uoms?filter[__proto__]=1' },
  { operation: 'GET /{tenant}/api/v1/sales-data', method: 'GET', path: '/demo/api/v1/sales-data?filter[__proto__]=1' },
  { operation: 'POST /{tenant}/api/v1/uoms', method: 'POST', path: '/demo/api/v1/uoms', headers: json, body: '[]' },
  { operation: 'PATCH /{tenant}/api/v1/uoms/{id}', method: 'PATCH', path: '/demo/api/v1/uoms/1', headers: json, body: '[1]' },
  { operation: 'GET /{tenant}/api/v1/uoms', method: 'GET', path: '/%ff/api/v1/uoms' },
  { operation: 'GET /{tenant}/api/v1/items/{id}', method: 'GET', path: '/demo/api/v1/items/%ff' },
  { operation: 'GET /{tenant}/api/v1/jobs/{job_id}', method: 'GET', path: '/demo/api/v1/jobs/%ff' },
  { operation: 'GET /problems/{slug}', method: 'GET', path: '/problems/%ff' },
  { operation: 'GET /{tenant}/login', method: 'GET', path: '/%ff/login' },
  ...['gzip', 'deflate', 'br', 'compress'].map((encoding) => ({
    operation: 'POST /{tenant}/api/v1/uoms',
    method: 'POST',
    path: '/demo/api/v1/uoms',
    headers: { ...json, 'Content-Encoding': encoding },
    body: '{"name":"fuzz-enc","abbreviation":"fze"}',
  })),
  {
    operation: 'POST /{tenant}/api/v1/workflows/sync-sales',
    method: 'POST',
    path: '/demo/api/v1/workflows/sync-sales',
    headers: json,
    body: `{"dry_run":true,"data":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  },
  {
    operation: 'POST /{tenant}/api/v1/uoms',
    method: 'POST',
    path: '/demo/api/v1/uoms',
    headers: json,
    body: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
  },
  {
    operation: 'POST /{tenant}/api/v1/tokens/create',
    method: 'POST',
    path: '/%00/api/v1/tokens/create',
    headers: json,
    body: '{"email":"planner@demo.test","password":"x"}',
  },
  {
    operation: 'POST /{tenant}/api/v1/tokens/create',
    method: 'POST',
    path: `/${'t'.repeat(3000)}/api/v1/tokens/create`,
    headers: json,
    body: '{"email":"planner@demo.test","password":"x"}',
  },
  { operation: 'DELETE /{tenant}/api/v1/tokens/{id}', method: 'DELETE', path: '/demo/api/v1/tokens/9007199254740993' },
  { operation: 'GET /{tenant}/api/v1/jobs/{job_id}', method: 'GET', path: '/demo/api/v1/jobs/9007199254740993' },
  {
    operation: 'GET /{tenant}/api/v1/sales',
    method: 'GET',
    path: '/demo/api/v1/sales?sale_type_name=History&start_date=2025-01-01&duration=7&current_index=9007199254740993',
  },
  {
    operation: 'POST /{tenant}/api/v1/workflows/sync-sales/import',
    method: 'POST',
    path: '/demo/api/v1/workflows/sync-sales/import',
    ...(() => {
      const built = multipartBody(
        [
          ['field_mappings[99999999]', 'item_name'],
          ['dry_run', 'true'],
        ],
        { name: 'f.csv', content: 'a\n1\n' },
      );
      return { headers: { 'Content-Type': built.contentType }, body: built.raw };
    })(),
  },
  {
    operation: 'POST /{tenant}/api/v1/forecasts/generate',
    method: 'POST',
    path: '/demo/api/v1/forecasts/generate',
    headers: { 'Content-Type': 'text/plain' },
    body: '{"dry_run":true}',
  },
  {
    operation: 'POST /{tenant}/api/v1/uoms',
    method: 'POST',
    path: '/demo/api/v1/uoms',
    headers: { 'Content-Type': 'text/plain' },
    body: '{"name":"fuzz-text","abbreviation":"fzt"}',
  },
  { operation: 'GET /{tenant}/api/v1/uoms', method: 'GET', path: '/demo/api/v1/uoms', headers: { 'X-Padding': 'p'.repeat(20_000) } },
];
