/**
 * No write half-applied: a reference write the API refuses (an array with one bad element,
 * a prototype-named key, a PATCH with one bad field) leaves the resource's whole list exactly
 * as it was, whatever the answer's status.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { exerciseRequest, seedFor, SETTINGS, startTarget, type FuzzTarget } from './support/harness';
import { closeAgent, send } from './support/http';
import { JsonObject, toJson } from './support/json';
import { mutateArb, operationsOf, validArb, type JsonSchema, type Operation } from './support/openapi';
import { PROTO_KEYS } from './support/hostile';

const WRITABLE = ['uoms', 'items', 'customer-groups', 'locations', 'item-locations', 'calendars', 'views', 'hierarchy-levels'];

interface Write {
  method: 'POST' | 'PATCH';
  path: string;
  body: string;
}

describe('fuzz: refused reference writes change nothing', function () {
  this.timeout(0);
  let t: FuzzTarget;
  let ops: Operation[];

  before(async function () {
    this.timeout(60_000);
    t = await startTarget();
    ops = operationsOf(await (await fetch(`${t.sys.baseUrl}/openapi.json`)).json());
  });
  after(async () => {
    closeAgent();
    await t?.sys.stop();
  });

  /** Every record of the resource, page by page, as one comparable text. */
  async function snapshot(resource: string): Promise<string> {
    const rows: unknown[] = [];
    for (let page = 1; ; page++) {
      const res = await send(t.sys.baseUrl, {
        operation: 'snapshot',
        kind: 'read',
        method: 'GET',
        path: `/demo/api/v1/${resource}?page=${page}&per_page=100`,
        headers: { Accept: 'application/json', Authorization: `Bearer ${t.planner}` },
      });
      assert.equal(res.status, 200, `reading ${resource}: ${res.text.slice(0, 200)}`);
      const body = res.json as { data: unknown[]; meta: { pagination: { last_page: number } } };
      rows.push(...body.data);
      if (page >= body.meta.pagination.last_page || body.data.length === 0) return JSON.stringify(rows);
    }
  }

  function writeArb(resource: string): fc.Arbitrary<Write> {
    const post = ops.find((o) => o.id === `POST /{tenant}/api/v1/${resource}`)!;
    const patch = ops.find((o) => o.id === `PATCH /{tenant}/api/v1/${resource}/{id}`)!;
    const element: JsonSchema = post.body!.schema.oneOf.find((s: JsonSchema) => s.type === 'object');
    const patchSchema = patch.body!.schema;
    const bad = fc.oneof(
      validArb(element).chain((v) => mutateArb(v, element)),
      fc
        .tuple(validArb(element), fc.constantFrom(...PROTO_KEYS))
        .map(([v, key]) => new JsonObject([...Object.entries(v as object), [key, { polluted: true }]])),
    );
    const batch = fc.tuple(fc.array(validArb(element), { minLength: 1, maxLength: 3 }), bad, fc.nat()).map(([good, wrong, at]): Write => {
      const rows: unknown[] = [...good];
      rows.splice(at % (good.length + 1), 0, wrong);
      return { method: 'POST', path: `/demo/api/v1/${resource}`, body: toJson(rows) };
    });
    const change = fc
      .tuple(
        fc.integer({ min: 1, max: 12 }),
        fc.oneof(
          validArb(patchSchema).chain((v) => mutateArb(v, patchSchema)),
          fc
            .tuple(validArb(patchSchema), fc.constantFrom(...PROTO_KEYS))
            .map(([v, key]) => new JsonObject([...Object.entries(v as object), [key, 1]])),
        ),
      )
      .map(([id, value]): Write => ({ method: 'PATCH', path: `/demo/api/v1/${resource}/${id}`, body: toJson(value) }));
    return fc.oneof({ arbitrary: batch, weight: 3 }, { arbitrary: change, weight: 1 });
  }

  for (const resource of WRITABLE) {
    it(`leaves ${resource} unchanged when a write is refused`, async () => {
      const statuses: number[] = [];
      const details = await fc.check(
        fc.asyncProperty(writeArb(resource), async (w) => {
          const op = ops.find(
            (o) => o.id === (w.method === 'POST' ? `POST /{tenant}/api/v1/${resource}` : `PATCH /{tenant}/api/v1/${resource}/{id}`),
          )!;
          const before = await snapshot(resource);
          const req = {
            operation: op.id,
            kind: 'refused-write',
            method: w.method,
            path: w.path,
            headers: { Accept: 'application/json', Authorization: `Bearer ${t.planner}`, 'Content-Type': 'application/json' },
            body: w.body,
          };
          // The answer's shape is checked as everywhere (known defects aside); a 5xx must not half-write either.
          let status: number;
          try {
            status = (await exerciseRequest(t, op, req, 'demo planner *'))?.status ?? 0;
          } catch (err) {
            const match = /^5xx: (\d+)/.exec((err as Error).message);
            if (!match) throw err;
            status = Number(match[1]);
          }
          statuses.push(status);
          if (status >= 400) {
            assert.equal(
              await snapshot(resource),
              before,
              `${w.method} ${w.path} answered ${status} but changed ${resource}\nbody: ${w.body.slice(0, 400)}`,
            );
          }
        }),
        { seed: seedFor(`writes ${resource}`), numRuns: SETTINGS.runs, endOnFailure: !SETTINGS.shrink },
      );
      if (details.failed) {
        const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        assert.fail(
          `failed after ${details.numRuns} runs (fast-check seed ${details.seed}, path ${details.counterexamplePath}; FUZZ_SEED=${SETTINGS.seed})\n${error}`,
        );
      }
      // Otherwise the property held vacuously.
      assert.ok(statuses.filter((s) => s >= 400).length >= statuses.length / 2, `too few writes refused: ${statuses.join(' ')}`);
    });
  }
});
