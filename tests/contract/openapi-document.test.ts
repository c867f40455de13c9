import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { allRoutes, openApiDocument, operationIdOf } from '@supply/gateway';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

type Json = Record<string, any>;
const doc = openApiDocument() as Json;
const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method, op: op as Json })),
);
const apiOperations = operations.filter((o) => o.path.startsWith('/{tenant}/'));

describe('OpenAPI document', () => {
  it('documents every declared route once, each with a unique operationId, a summary and a declared tag', () => {
    const routes = allRoutes(new Proxy({}, { get: () => undefined }) as never, { now: () => new Date(), revoked: () => {} });
    assert.equal(apiOperations.length, routes.length);
    const ids = operations.map((o) => o.op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual(new Set(routes.map(operationIdOf)), new Set(apiOperations.map((o) => o.op.operationId)));
    const tags = new Set((doc.tags as Json[]).map((t) => t.name));
    for (const { op } of operations) {
      assert.ok(op.summary, op.operationId);
      assert.equal(op.tags.length, 1);
      assert.ok(tags.has(op.tags[0]), `${op.operationId}: tag ${op.tags[0]}`);
    }
  });

  it('gives every API operation its 4xx answers, X-Request-Id, and the metering headers where metered', () => {
    for (const { op } of apiOperations) {
      const statuses = Object.keys(op.responses);
      assert.ok(
        statuses.some((s) => s.startsWith('4')),
        op.operationId,
      );
      assert.ok(statuses.includes('404') && statuses.includes('503'), op.operationId);
      const success = statuses.filter((s) => s.startsWith('2')).map((s) => op.responses[s]);
      assert.ok(success.length > 0, op.operationId);
      for (const answer of success) {
        assert.ok(answer.headers['X-Request-Id'], op.operationId);
        if (op['x-credit-cost'] !== undefined)
          assert.ok(answer.headers['RateLimit'] && answer.headers['Credits-Remaining'], op.operationId);
      }
      if (op.security?.length !== 0) assert.ok(statuses.includes('401') && statuses.includes('429'), op.operationId);
    }
  });

  it('answers syncs, imports and view runs with 202 and the job, and documents their bodies (JSON and multipart)', () => {
    for (const path of [
      '/{tenant}/api/v1/workflows/sync-sales',
      '/{tenant}/api/v1/workflows/sync-inventory/import',
      '/{tenant}/api/v1/forecasts/generate',
      '/{tenant}/api/v1/supply-plans/generate',
    ]) {
      const op = doc.paths[path].post;
      assert.ok(op.responses['202'], path);
      assert.ok(op.responses['202'].headers.Location, path);
      assert.ok(op.requestBody?.content, path);
      assert.ok(
        op.parameters.some((p: Json) => p.name === 'Idempotency-Key' && p.in === 'header'),
        path,
      );
    }
    assert.ok(doc.paths['/{tenant}/api/v1/workflows/sync-sales/import'].post.requestBody.content['multipart/form-data']);
    assert.equal(doc.components.schemas.Job.type, 'object');
    assert.ok(JSON.stringify(doc.components.schemas.PostWorkflowsSyncSalesResponse).includes('#/components/schemas/Job'));
  });

  it('describes filter as a deepObject and the offset pagination meta field by field', () => {
    const filter = doc.paths['/{tenant}/api/v1/sales-data'].get.parameters.find((p: Json) => p.name === 'filter');
    assert.equal(filter.style, 'deepObject');
    assert.ok(filter.schema.properties.item_name);
    const pagination = doc.components.schemas.OffsetPaginationMeta.properties.pagination;
    assert.deepEqual(pagination.required.sort(), ['current_page', 'last_page', 'per_page', 'result_count', 'total']);
  });

  it('marks every legacy route deprecated, the token exchange with its sunset and 410', () => {
    const legacy = operations.filter((o) => o.op.tags[0] === 'Legacy');
    assert.ok(legacy.length >= 5);
    for (const { op } of legacy) assert.equal(op.deprecated, true, op.operationId);
    const exchange = doc.paths['/{tenant}/api/v1/tokens/create'].post;
    assert.equal(exchange['x-sunset'], '2027-01-01T00:00:00.000Z');
    assert.ok(exchange.responses['410'] && exchange.responses['200'].headers.Sunset);
  });

  it('documents Sunset on exactly the routes with a decided sunset (DECISIONS: the legacy token exchange); the others say none is announced', () => {
    const resolve = (node: Json): Json =>
      typeof node?.$ref === 'string'
        ? node.$ref
            .slice(2)
            .split('/')
            .reduce((n: Json, k: string) => n[k], doc)
        : node;
    const withSunsetHeader = operations
      .filter(({ op }) => Object.values(op.responses as Json).some((r) => Object.keys(resolve(r).headers ?? {}).includes('Sunset')))
      .map(({ op }) => op.operationId);
    const decided = operations.filter(({ op }) => op['x-sunset']).map(({ op }) => op.operationId);
    assert.deepEqual(decided, ['postTokensCreate']);
    assert.deepEqual(withSunsetHeader, decided);
    for (const { op } of operations.filter((o) => o.op.deprecated && !o.op['x-sunset'])) {
      assert.match(op.description, /Deprecated; no sunset has been announced yet/, op.operationId);
    }
    assert.match(doc.paths['/{tenant}/api/v1/tokens/create'].post.description, /Deprecated; removed on 2027-01-01 \(410 from then\)/);
  });

  it('answers every 4xx but 401 with a problem (application/problem+json), and 401 in the Laravel shape', () => {
    const resolve = (node: Json): Json =>
      typeof node?.$ref === 'string'
        ? node.$ref
            .slice(2)
            .split('/')
            .reduce((n: Json, k: string) => n[k], doc)
        : node;
    let checked = 0;
    for (const { op } of operations) {
      for (const [status, raw] of Object.entries(op.responses as Json)) {
        if (!status.startsWith('4')) continue;
        const types = Object.keys(resolve(raw).content ?? {});
        if (status === '401') assert.deepEqual(types, ['application/json'], `${op.operationId} 401`);
        else assert.ok(types.includes('application/problem+json'), `${op.operationId} ${status}: ${types.join(', ')}`);
        checked++;
      }
    }
    assert.ok(checked > 300, `only ${checked} answers`);
  });

  it('has an example for every request body and every answer with a body, each valid against its schema', () => {
    const ajv = new Ajv2020({ strict: false, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(doc, 'doc');
    const check = (where: string, at: string, media: Json) => {
      assert.ok('example' in media, `${where}: no example`);
      const validate = ajv.compile({ $ref: `doc#/${at}/schema` });
      assert.ok(validate(media.example), `${where}: ${ajv.errorsText(validate.errors)}`);
    };
    const answers: Array<[string, string, Json]> = [
      ...operations.flatMap(({ path, method, op }) =>
        Object.entries(op.responses as Json)
          .filter(([, r]) => !r.$ref)
          .map(([s, r]) => [`${op.operationId} ${s}`, pointer('paths', path, method, 'responses', s), r] as [string, string, Json]),
      ),
      ...Object.entries(doc.components.responses as Json).map(
        ([name, r]) => [name, pointer('components', 'responses', name), r] as [string, string, Json],
      ),
    ];
    let checked = 0;
    for (const [where, at, answer] of answers) {
      for (const [type, media] of Object.entries((answer.content ?? {}) as Json)) {
        if (!type.includes('json')) continue;
        check(`${where} ${type}`, `${at}/${pointer('content', type)}`, media);
        checked++;
      }
    }
    for (const { path, method, op } of operations) {
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        if (type === 'multipart/form-data') assert.ok(media.example, op.operationId);
        else check(`${op.operationId} request ${type}`, `${pointer('paths', path, method, 'requestBody', 'content', type)}`, media);
        checked++;
      }
    }
    assert.ok(checked > 100, `only ${checked} examples`);
  });
});
