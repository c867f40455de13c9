import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument, PASSTHROUGH_VIA } from '@supply/gateway';

type Json = Record<string, any>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const DOC_ID = 'openapi.json';
const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

interface Operation {
  template: string;
  method: string;
  regex: RegExp;
  /** Literal segments: the more, the more specific (`/tokens/provision` before `/tokens/{id}`). */
  literals: number;
  op: Json;
  path: string;
}

/** What an answer was checked against, and what did not hold. */
export interface Verdict {
  operation: string | null;
  problems: string[];
}

/**
 * Checks answers of the gateway against its OpenAPI document: the status is documented for
 * the operation, the required and present headers match, the body matches the schema of its
 * content type. Answers to API paths the document does not name must be 404/405 problems (or
 * 503/504 problems of the legacy passthrough); answers forwarded from it (`Via`) are its own.
 */
export class OpenApiValidator {
  readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(doc: Json = openApiDocument() as Json) {
    this.doc = doc;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, DOC_ID);
    for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
      const segments = template.split('/').filter(Boolean);
      const regex = new RegExp(
        `^/${segments.map((s) => (s.startsWith('{') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`,
      );
      for (const method of METHODS) {
        if (item[method]) {
          this.operations.push({
            template,
            method,
            regex,
            literals: segments.filter((s) => !s.startsWith('{')).length,
            op: item[method],
            path: pointer('paths', template, method),
          });
        }
      }
    }
    this.operations.sort((a, b) => b.literals - a.literals);
  }

  private resolve(node: Json): { node: Json; at: string | null } {
    if (typeof node?.$ref !== 'string') return { node, at: null };
    const at = node.$ref.slice(2);
    const found = at.split('/').reduce((n: Json, part: string) => n?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
    return { node: found, at };
  }

  private validator(ref: string): ValidateFunction {
    let fn = this.compiled.get(ref);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `${DOC_ID}#/${ref}` });
      this.compiled.set(ref, fn);
    }
    return fn;
  }

  /** The documented operation for a request, if any. */
  match(method: string, pathname: string): Operation | undefined {
    const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    return this.operations.find((o) => o.method === m && o.regex.test(pathname));
  }

  check(request: { method: string; url: string }, answer: { status: number; headers: Headers; body: string }): Verdict {
    const { pathname } = new URL(request.url);
    const problems: string[] = [];
    // CORS preflights belong to the transport, not to any operation; passthrough answers come from the previous deployment.
    if (request.method.toUpperCase() === 'OPTIONS') return { operation: null, problems };
    if ((answer.headers.get('via') ?? '').includes(PASSTHROUGH_VIA)) return { operation: null, problems };
    const operation = this.match(request.method, pathname);
    const label = operation
      ? `${operation.method.toUpperCase()} ${operation.template} (${operation.op.operationId})`
      : `${request.method} ${pathname}`;
    if (!operation) {
      // Unknown API paths and methods answer the not-found or method-not-allowed problem.
      if (!/^\/[^/]+\/api\//.test(pathname)) return { operation: null, problems };
      // 503/504: the legacy passthrough could not get an answer from the previous deployment.
      if (![404, 405, 503, 504].includes(answer.status)) problems.push(`${label}: not in the document, answered ${answer.status}`);
      else this.checkBody(`components/schemas/Problem`, answer, problems, label);
      return { operation: null, problems };
    }
    const responses = operation.op.responses as Json;
    const key = String(answer.status);
    const documented = responses[key] ?? responses[`${key[0]}XX`] ?? responses.default;
    if (!documented) {
      problems.push(`${label}: status ${answer.status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
      return { operation: operation.op.operationId, problems };
    }
    const responseRef = responses[key] ? `${operation.path}/responses/${key}` : null;
    const { node: response, at } = this.resolve(documented);
    const base = at ?? responseRef!;
    for (const [name, raw] of Object.entries((response.headers ?? {}) as Json)) {
      const { node: header } = this.resolve(raw);
      const value = answer.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${label} ${answer.status}: header ${name} is required`);
        continue;
      }
      const headerRef = raw.$ref ? `${raw.$ref.slice(2)}/schema` : `${base}/${pointer('headers', name, 'schema')}`;
      const fn = this.validator(headerRef);
      if (!fn(value)) problems.push(`${label} ${answer.status}: header ${name}: ${this.ajv.errorsText(fn.errors)} (${value})`);
    }
    const content = response.content as Json | undefined;
    if (!content || request.method.toUpperCase() === 'HEAD') return { operation: operation.op.operationId, problems };
    const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!content[type]) {
      problems.push(`${label} ${answer.status}: content type ${type || '(none)'} is not documented (${Object.keys(content).join(', ')})`);
      return { operation: operation.op.operationId, problems };
    }
    if (type.endsWith('json'))
      this.checkBody(`${base}/${pointer('content', type, 'schema')}`, answer, problems, `${label} ${answer.status}`);
    return { operation: operation.op.operationId, problems };
  }

  private checkBody(schemaRef: string, answer: { body: string }, problems: string[], label: string): void {
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      problems.push(`${label}: body is not JSON`);
      return;
    }
    const fn = this.validator(schemaRef);
    if (!fn(body)) {
      const errors = (fn.errors ?? [])
        .slice(0, 5)
        .map(
          (e) =>
            `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${e.params.additionalProperty})` : ''}`,
        );
      problems.push(`${label}: body does not match the schema: ${errors.join('; ')}`);
    }
  }
}
