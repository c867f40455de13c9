/**
 * Operations and their arbitraries, derived from the OpenAPI document the gateway publishes
 * (plus the explicit supplement for what it does not say yet): valid and invalid path,
 * query, header and body values from each parameter's and body's JSON Schema.
 */
import fc from 'fast-check';
import { DEMO_VALUES, EXTRA_OPERATIONS, PATH_PARAMS, PINNED_FIELDS, ROWS, VALID_BODY_OVERRIDES } from '../openapi-supplement';
import { RawJson, toFormValue, toJson } from './json';
import type { FuzzRequest } from './http';

export type JsonSchema = Record<string, any>;

interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

/** A request body: its content types and the schema of the first (multipart: of its form fields besides the file). */
export interface OperationBody {
  contentTypes: string[];
  schema: JsonSchema;
  /** Rows of the CSV `file` part for multipart routes. */
  csv?: 'sales' | 'inventory';
  /** The schema of those rows (and of an untyped `payload`'s). */
  rows?: JsonSchema;
}

export interface Operation {
  /** `POST /{tenant}/api/v1/items` */
  id: string;
  method: string;
  template: string;
  params: Param[];
  body?: OperationBody;
  /** Speaks the legacy 422 (`success: false`). */
  legacy: boolean;
  /** A server-rendered page or probe: HTML errors, no API shapes. */
  page: boolean;
  /** Needs no token. */
  open: boolean;
  /** `x-required-scope`, or null. */
  scope: string | null;
}

/** The document with every local `$ref` (components of schemas, answers, headers) replaced by its target. */
export function dereferenced(doc: any): any {
  const resolve = (node: any, depth: number): any => {
    if (Array.isArray(node)) return node.map((n) => resolve(n, depth));
    if (!node || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
      if (depth > 32) return {};
      const target = node.$ref
        .slice(2)
        .split('/')
        .reduce((n: any, key: string) => n?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      const { $ref: _ref, ...siblings } = node;
      return { ...resolve(target, depth + 1), ...resolve(siblings, depth) };
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolve(value, depth)]));
  };
  return resolve(doc, 0);
}

/**
 * The body of an operation from its documented content: JSON or form fields from the first
 * type; a multipart-only route's form fields without the file, which is built from `rows`.
 */
function bodyOf(id: string, content: Record<string, { schema: JsonSchema }>, schemas: Record<string, JsonSchema>): OperationBody {
  const types = Object.keys(content);
  let schema = content[types[0]!]!.schema;
  const rows = ROWS[id] ? schemas[ROWS[id].schema] : undefined;
  if (types[0] === 'multipart/form-data') {
    const { file: _file, ...fields } = schema.properties ?? {};
    schema = { ...schema, properties: fields, required: (schema.required ?? []).filter((k: string) => k !== 'file') };
  } else if (rows && schema.properties?.payload) {
    schema = { ...schema, properties: { ...schema.properties, payload: { ...schema.properties.payload, items: rows } } };
  }
  return { contentTypes: types, schema, ...(ROWS[id] ? { csv: ROWS[id].csv, rows } : {}) };
}

/** The document's operations, and the supplement's pages it does not describe itself, in a stable order. */
export function operationsOf(published: any): Operation[] {
  const doc = dereferenced(published);
  const ops: Operation[] = [];
  for (const [template, byMethod] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, o] of Object.entries<any>(byMethod)) {
      const id = `${method.toUpperCase()} ${template}`;
      const params: Param[] = (o.parameters ?? []).map((p: any) => ({
        name: p.name,
        in: p.in,
        required: Boolean(p.required),
        schema: p.in === 'path' && PATH_PARAMS[p.name] ? PATH_PARAMS[p.name] : querySchema(template, p.name, p.schema ?? {}),
      }));
      const body = o.requestBody ? bodyOf(id, o.requestBody.content, doc.components.schemas) : undefined;
      ops.push({
        id,
        method: method.toUpperCase(),
        template,
        params,
        body,
        legacy: (o.tags ?? []).includes('Legacy'),
        page: false,
        open: Array.isArray(o.security) && o.security.length === 0,
        scope: o['x-required-scope'] ?? null,
      });
    }
  }
  for (const extra of EXTRA_OPERATIONS) {
    if (ops.some((op) => op.id === `${extra.method.toUpperCase()} ${extra.path}`)) continue;
    const params: Param[] = [...extra.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => ({
      name: m[1]!,
      in: 'path',
      required: true,
      schema: PATH_PARAMS[m[1]!]!,
    }));
    ops.push({
      id: `${extra.method.toUpperCase()} ${extra.path}`,
      method: extra.method.toUpperCase(),
      template: extra.path,
      params,
      body: extra.body,
      legacy: false,
      page: true,
      open: true,
      scope: null,
    });
  }
  return ops;
}

/**
 * `filter`, `sort` and `include` of cursor reads are typed only in prose ("names: a, b";
 * "comma list of a, b"; "none"); offset reads type `filter` as any name and leave `sort` and
 * `include` untyped (any value is a 400). Both become schemas here; `x-omit` marks a parameter
 * a valid request leaves out.
 */
function querySchema(template: string, name: string, schema: JsonSchema): JsonSchema {
  const text: string = schema.description ?? '';
  const names = /names: ([a-z_, ]+)/.exec(text)?.[1];
  if (name === 'filter' && names) {
    const props = Object.fromEntries(
      names
        .split(',')
        .map((n) => n.trim())
        .map((n) => [n, /_(from|to)$/.test(n) ? { type: 'string', format: 'date' } : { type: 'string', minLength: 1, maxLength: 255 }]),
    );
    return { ...schema, type: 'object', properties: props, additionalProperties: false };
  }
  const list = /comma list of ([a-z_, ]+)/.exec(text)?.[1];
  if (list) return { ...schema, type: 'string', 'x-comma-list': list.split(',').map((n) => n.trim()), 'x-descending': name === 'sort' };
  if (text.trim() === 'none' || ((name === 'sort' || name === 'include') && Object.keys(schema).length === 0))
    return { ...schema, 'x-omit': true };
  if (name === 'filter' && schema.additionalProperties && !schema.properties) {
    const keys = template.endsWith('/item-locations') ? ['item_name', 'location_name'] : ['name'];
    return { ...schema, properties: Object.fromEntries(keys.map((k) => [k, schema.additionalProperties])), additionalProperties: false };
  }
  return schema;
}

// ---------------------------------------------------------------- values from a schema

const MAX_GEN_ITEMS = 3;
const ascii = fc.string({ unit: 'grapheme-ascii', maxLength: 24 });
const anyString = fc.oneof(ascii, fc.string({ unit: 'grapheme', maxLength: 16 }), fc.string({ unit: 'binary', maxLength: 8 }));

function dateArb(): fc.Arbitrary<string> {
  return fc
    .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
}

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties || schema.additionalProperties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

/** A value valid for `schema`; `name` (the field's name) picks demo values where there are some. */
export function validArb(schema: JsonSchema, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object') return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: JsonSchema) => validArb(s, name, depth)));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((t) => validArb({ ...schema, type: t }, name, depth)));
  switch (types[0]) {
    case 'string': {
      if (schema['x-comma-list']) {
        const names: string[] = schema['x-comma-list'];
        return fc
          .uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 3 })
          .chain((picked) => fc.tuple(...picked.map((n) => (schema['x-descending'] ? fc.constantFrom(n, `-${n}`) : fc.constant(n)))))
          .map((picked) => picked.join(','));
      }
      if (schema.format === 'date') return dateArb();
      if (schema.format === 'date-time') return dateArb().map((d) => `${d}T00:00:00Z`);
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 40, 40);
      const plain =
        schema.pattern && !schema.format
          ? fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity))
          : fc
              .string({ unit: 'grapheme-ascii', minLength: Math.min(min, max), maxLength: Math.max(min, max) })
              .map((s) => (min > 0 && !s.trim() ? `x${s}` : s));
      const demo = DEMO_VALUES[name];
      return demo ? fc.oneof({ arbitrary: fc.constantFrom(...demo), weight: 3 }, { arbitrary: plain, weight: 1 }) : plain;
    }
    case 'integer': {
      const min = Math.max(schema.minimum ?? -1_000_000, Number.MIN_SAFE_INTEGER);
      const max = Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER);
      const small = schema['x-small'] ?? (/(^|_)ids?$/.test(name) ? 150 : undefined);
      const near = fc.integer({ min, max: Math.min(max, Math.max(min, small ?? min + 100)) });
      return fc.oneof({ arbitrary: near, weight: 4 }, { arbitrary: fc.integer({ min, max }), weight: 1 }, fc.constantFrom(min, max));
    }
    case 'number': {
      const min = schema.minimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      return fc.oneof(
        fc.integer({ min: Math.ceil(Math.max(min, -1e6)), max: Math.floor(Math.min(max, 1e6)) }),
        fc.double({ min, max, noNaN: true, noDefaultInfinity: true }),
      );
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = schema.minItems ?? 0;
      return fc.array(validArb(schema.items ?? {}, name, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(schema.maxItems ?? MAX_GEN_ITEMS, MAX_GEN_ITEMS)),
      });
    }
    case 'object': {
      const props: Record<string, JsonSchema> = schema.properties ?? {};
      const required: string[] = schema.required ?? [];
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validArb(s, k, depth + 1)])), {
        requiredKeys: required.filter((k) => k in props),
      });
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && Object.keys(props).length === 0) {
        const keys = schema.propertyNames ? validArb(schema.propertyNames, 'key') : ascii;
        return fc.dictionary(keys as fc.Arbitrary<string>, validArb(schema.additionalProperties, name, depth + 1), { maxKeys: 3 });
      }
      return record;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value that `schema` refuses (or, for schemas that take anything, something odd). */
export function invalidArb(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = typesOf(schema);
  const t = types.filter((x) => x !== 'null')[0];
  const wrong: fc.Arbitrary<unknown>[] = [
    fc.constantFrom<unknown>(null, true, 0, -1, 1.5, '', ' ', 'null', '[]', '{}', [], {}, [1, 'a'], { x: 1 }),
    anyString,
  ];
  if (t === 'string' || Array.isArray(schema.enum)) {
    if (schema.maxLength) wrong.push(fc.constant('x'.repeat(schema.maxLength + 1)));
    wrong.push(fc.constant('y'.repeat(3000)), fc.integer(), fc.constant('2026-02-30'), fc.constant('0000-00-00'));
  }
  if (t === 'integer' || t === 'number') {
    wrong.push(
      fc.constantFrom<unknown>(
        'abc',
        '1e3',
        '0x10',
        ' 12 ',
        1.25,
        -0.5,
        new RawJson('9007199254740993'),
        new RawJson('1e400'),
        new RawJson('-0'),
        new RawJson('1e-400'),
      ),
      fc.double({ noNaN: true }),
    );
    if (typeof schema.minimum === 'number') wrong.push(fc.constant(schema.minimum - 1));
    if (typeof schema.maximum === 'number') wrong.push(fc.constant(schema.maximum + 1));
  }
  if (t === 'array') {
    wrong.push(fc.constant('a,b'), fc.constant({ 0: 'a' }));
    if (typeof schema.maxItems === 'number' && schema.maxItems <= 10_000)
      wrong.push(fc.constant(Array.from({ length: schema.maxItems + 1 }, () => ({}))));
  }
  if (t === 'object') wrong.push(fc.constant([]), fc.constant('{"a":1}'));
  return fc.oneof(...wrong);
}

/**
 * One targeted mutation of a valid value: a field gets a wrong value, a required field goes
 * missing, an unknown field appears; recursing into objects and arrays.
 */
export function mutateArb(value: unknown, schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) {
    const match = alternatives.find((s: JsonSchema) =>
      Array.isArray(value) ? typesOf(s).includes('array') : typesOf(s).includes('object') || typesOf(s).length === 0,
    );
    if (match && value !== null && typeof value === 'object') return mutateArb(value, match, depth);
    return invalidArb(schema);
  }
  if (Array.isArray(value) && value.length > 0 && depth < 4) {
    return fc.oneof(
      invalidArb(schema),
      fc
        .nat(value.length - 1)
        .chain((i) => mutateArb(value[i], schema.items ?? {}, depth + 1).map((v) => value.map((x, j) => (j === i ? v : x)))),
    );
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && depth < 4) {
    const obj = value as Record<string, unknown>;
    const props: Record<string, JsonSchema> = schema.properties ?? {};
    const names = Object.keys(props);
    const options: fc.Arbitrary<unknown>[] = [
      invalidArb(schema),
      fc.constantFrom('colour', 'id', 'tenant', 'created_at', 'x'.repeat(300)).map((k) => ({ ...obj, [k]: 1 })),
    ];
    if (names.length > 0) {
      options.push(
        fc
          .constantFrom(...names)
          .chain((k) => (k in obj ? mutateArb(obj[k], props[k]!, depth + 1) : invalidArb(props[k]!)).map((v) => ({ ...obj, [k]: v }))),
      );
    }
    const present = Object.keys(obj);
    if (present.length > 0) {
      options.push(fc.constantFrom(...present).map((k) => Object.fromEntries(Object.entries(obj).filter(([key]) => key !== k))));
    }
    return fc.oneof(...options);
  }
  return invalidArb(schema);
}

// ---------------------------------------------------------------- requests

/** Who sends a request: a path tenant and the auth headers of one caller. */
export interface Caller {
  name: string;
  tenant: string;
  headers: Record<string, string>;
}

/** Parts of a request before they are written out; hostile classes rewrite them. */
export interface Draft {
  op: Operation;
  kind: string;
  caller: Caller;
  pathValues: Record<string, string>;
  /** Query pairs, written `k=v` as given (keys may hold brackets). */
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** A JSON-able body, or a raw one (Buffer/string) with its own Content-Type. */
  body?: { value: unknown; contentType: string } | { raw: Buffer | string; contentType?: string };
}

const encodePathValue = (v: string) => encodeURIComponent(v);

/** Query value encoding that keeps brackets and commas readable, as clients write them. */
export const encodeQuery = (s: string) => encodeURIComponent(s).replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%2C/g, ',');

function queryPairs(name: string, value: unknown): Array<[string, string]> {
  if (value === undefined) return [];
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson)) {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => [`${name}[${k}]`, toFormValue(v)]);
  }
  return [[name, toFormValue(value)]];
}

function multipart(fields: Array<[string, string]>, file?: { name: string; content: string }) {
  const boundary = `----fuzz${Math.random().toString(16).slice(2)}`;
  const parts: string[] = [];
  for (const [k, v] of fields) parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  if (file)
    parts.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: text/csv\r\n\r\n${file.content}\r\n`,
    );
  parts.push(`--${boundary}--\r\n`);
  return { raw: parts.join(''), contentType: `multipart/form-data; boundary=${boundary}` };
}
export { multipart as multipartBody };

const CSV_HEADERS = {
  sales: ['sale_type_name', 'item_name', 'customer_group_name', 'sell_date', 'timing_interval', 'quantity', 'uom'],
  inventory: ['item_name', 'location_name', 'inventory_date', 'quantity', 'uom'],
};

/** A CSV file of rows made from the row schema (valid) or with cells of any kind. */
function csvArb(kind: 'sales' | 'inventory', rowSchema: JsonSchema | undefined): fc.Arbitrary<string> {
  const header = CSV_HEADERS[kind];
  const cell = (v: unknown) => {
    const s = toFormValue(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const row = rowSchema ? validArb(rowSchema) : fc.constant({});
  return fc.oneof(
    fc
      .array(row, { minLength: 1, maxLength: 4 })
      .map((rows) => [header.join(','), ...rows.map((r: any) => header.map((h) => cell(r?.[h] ?? '')).join(','))].join('\n')),
    fc
      .array(fc.array(anyString, { maxLength: 9 }), { maxLength: 4 })
      .map((rows) => [header.join(','), ...rows.map((r) => r.map(cell).join(','))].join('\r\n')),
    fc.constantFrom('', '\ufeff', 'a,b\n"unclosed', '\xff\xfe\x00bad'),
  );
}

/** Writes a draft out as the request that goes on the wire. */
export function render(d: Draft): FuzzRequest {
  let path = d.op.template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => d.pathValues[name] ?? '');
  if (d.query.length) path += `?${d.query.map(([k, v]) => `${encodeQuery(k)}=${encodeQuery(v)}`).join('&')}`;
  const headers: Record<string, string> = { ...d.caller.headers, ...d.headers };
  let body: Buffer | string | undefined;
  if (d.body && 'raw' in d.body) {
    body = d.body.raw;
    if (d.body.contentType !== undefined) headers['Content-Type'] ??= d.body.contentType;
  } else if (d.body) {
    headers['Content-Type'] ??= d.body.contentType;
    body = d.body.contentType.includes('x-www-form-urlencoded') ? formEncode(d.body.value) : toJson(d.body.value);
  }
  return { operation: d.op.id, kind: d.kind, method: d.op.method, path, headers, body };
}

function formEncode(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return encodeQuery(toFormValue(value));
  return Object.entries(value as Record<string, unknown>)
    .flatMap(([k, v]) => queryPairs(k, v))
    .map(([k, v]) => `${encodeQuery(k)}=${encodeQuery(v)}`)
    .join('&');
}

function pinned(op: Operation, body: unknown): unknown {
  const pins = PINNED_FIELDS[op.id];
  if (!pins || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  return { ...(body as object), ...pins };
}

/** A body arbitrary for the operation: valid, or with one mutation. */
function bodyArb(op: Operation, invalid: boolean): fc.Arbitrary<Draft['body']> {
  const spec = op.body!;
  const schema = VALID_BODY_OVERRIDES[op.id] ?? spec.schema;
  return fc.constantFrom(...spec.contentTypes).chain((contentType): fc.Arbitrary<Draft['body']> => {
    if (contentType.startsWith('multipart/')) {
      const rowSchema = spec.rows ?? spec.schema.properties?.payload?.items ?? spec.schema.properties?.data?.items;
      const fieldsSchema = spec.schema.properties?.arguments ?? spec.schema;
      return fc
        .record({
          fields: invalid ? validArb(fieldsSchema).chain((v) => mutateArb(v, fieldsSchema)) : validArb(fieldsSchema),
          csv: csvArb(spec.csv ?? 'sales', rowSchema),
          withFile: invalid ? fc.boolean() : fc.constant(true),
          dryRun: fc.boolean(),
        })
        .map(({ fields, csv, withFile, dryRun }) => {
          const pairs =
            fields !== null && typeof fields === 'object' && !Array.isArray(fields)
              ? Object.entries(fields).flatMap(([k, v]) => queryPairs(k, v))
              : [['fields', toFormValue(fields)] as [string, string]];
          if (dryRun && !pairs.some(([k]) => k === 'dry_run')) pairs.push(['dry_run', 'true']);
          return multipart(pairs, withFile ? { name: 'rows.csv', content: csv } : undefined);
        });
    }
    const valid = validArb(schema);
    const value = invalid ? valid.chain((v) => mutateArb(v, spec.schema)) : valid;
    return value.map((v) => ({ value: pinned(op, v), contentType }));
  });
}

/** Path, query and header values of the operation: all valid, or one of them not. */
function partsArb(op: Operation, invalidPart: 'none' | 'path' | 'query' | 'header') {
  const entry = (p: Param, bad: boolean) => (bad ? invalidArb(p.schema) : validArb(p.schema, p.name)).map((v) => [p, v] as const);
  const optional = (p: Param) =>
    p.required ? entry(p, false) : p.schema['x-omit'] ? fc.constant(undefined) : fc.option(entry(p, false), { nil: undefined });
  const params = op.params.filter((p) => p.name !== 'tenant');
  const targets = params.filter((p) => p.in === invalidPart);
  const pick = targets.length ? fc.constantFrom(...targets) : fc.constant(undefined);
  return pick
    .chain((bad) => fc.tuple(...params.map((p) => (p === bad ? entry(p, true) : optional(p)))))
    .map((entries) => {
      const pathValues: Record<string, string> = {};
      const query: Array<[string, string]> = [];
      const headers: Record<string, string> = {};
      for (const e of entries) {
        if (!e) continue;
        const [p, v] = e;
        if (p.in === 'path') pathValues[p.name] = encodePathValue(toFormValue(v));
        else if (p.in === 'query') query.push(...queryPairs(p.name, v));
        else if (p.in === 'header') headers[p.name] = toFormValue(v).replace(/[^\x20-\x7e]/g, '?');
      }
      return { pathValues, query, headers };
    });
}

/**
 * Requests for one operation from the document's schemas: `valid`, or `invalid-<part>` with
 * one path, query, header or body value the schema refuses. Callers rotate through the given
 * ones (tokens of several users and scopes, none, a bad one).
 */
export function requestArb(op: Operation, callers: Caller[]): fc.Arbitrary<Draft> {
  const parts: Array<'none' | 'path' | 'query' | 'header' | 'body'> = ['none'];
  for (const where of ['path', 'query', 'header'] as const)
    if (op.params.some((p) => p.in === where && p.name !== 'tenant')) parts.push(where);
  if (op.body) parts.push('body');
  return fc.record({ caller: fc.constantFrom(...callers), which: fc.constantFrom(...parts) }).chain(({ caller, which }) =>
    fc
      .record({
        parts: partsArb(op, which === 'body' ? 'none' : which),
        body: op.body ? bodyArb(op, which === 'body') : fc.constant(undefined),
      })
      .map(({ parts: p, body }) => ({
        op,
        kind: which === 'none' ? 'valid' : `invalid-${which}`,
        caller,
        pathValues: { tenant: caller.tenant, ...p.pathValues },
        query: p.query,
        headers: p.headers,
        body,
      })),
  );
}
