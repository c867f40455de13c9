/**
 * Property-based fuzzing of every operation the gateway publishes in GET /openapi.json:
 * generated valid and invalid requests and the hostile classes, against the all-in-one
 * system. No 5xx, every failure in its documented shape, no answer slower than 2 s, the
 * process healthy with bounded memory afterwards. Known-open defects: ./known-defects.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { HOSTILE_CLASSES, HOSTILE_EXAMPLES, hostileArb } from './support/hostile';
import { closeAgent } from './support/http';
import { exerciseRequest, healthOf, heapAfterGc, runProperty, SETTINGS, startTarget, watchRss, type FuzzTarget } from './support/harness';
import { dereferenced, operationsOf, requestArb, type Operation } from './support/openapi';
import { ROWS } from './openapi-supplement';

describe('fuzz: the published API under generated and hostile requests', function () {
  this.timeout(0);
  let t: FuzzTarget;
  let ops: Operation[];
  let published: any;
  let rssBefore = 0;
  let heapBefore = 0;
  let rss: ReturnType<typeof watchRss>;

  before(async function () {
    this.timeout(60_000);
    t = await startTarget();
    const res = await fetch(`${t.sys.baseUrl}/openapi.json`);
    published = await res.json();
    ops = operationsOf(published);
    heapBefore = heapAfterGc();
    rssBefore = process.memoryUsage.rss();
    rss = watchRss();
  });

  after(async () => {
    closeAgent();
    if (process.env.FUZZ_VERBOSE === '1' && t) {
      console.log(`fuzz: ${t.stats.sent} requests (seed ${SETTINGS.seed}, runs ${SETTINGS.runs})`);
      console.log('excused (known defects):', Object.fromEntries(t.stats.excused));
      console.log('withheld (known defects):', Object.fromEntries(t.stats.withheld));
      console.log(
        'slowest:',
        t.stats.slowest.map((s) => `${Math.round(s.ms)} ms #${s.at} ${s.line}`),
      );
      console.log('statuses:', Object.fromEntries([...t.stats.statuses].sort()));
    }
    await t?.sys.stop();
  });

  it('derives an operation for every path and method of the document', () => {
    assert.ok(ops.length >= 58, `only ${ops.length} operations`);
    for (const op of ops.filter((o) => !o.page))
      assert.ok(op.params.some((p) => p.name === 'tenant') || !op.template.includes('{tenant}'), op.id);
    const bodyless = ops.filter((o) => o.method === 'POST' && !o.body && !o.page).map((o) => o.id);
    assert.deepEqual(bodyless, [], 'POST operations without a body schema (document or supplement)');
  });

  it('takes every request body from the document; the supplement only types rows of CSV files and legacy payloads', () => {
    const doc = dereferenced(published);
    let checked = 0;
    for (const [template, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, o] of Object.entries<any>(item)) {
        if (!o.requestBody) continue;
        const id = `${method.toUpperCase()} ${template}`;
        const op = ops.find((x) => x.id === id)!;
        const types = Object.keys(o.requestBody.content);
        assert.deepEqual(op.body?.contentTypes, types, id);
        const documented = o.requestBody.content[types[0]!].schema;
        if (!ROWS[id]) assert.deepEqual(op.body!.schema, documented, id);
        else {
          assert.deepEqual(op.body!.rows, doc.components.schemas[ROWS[id].schema], id);
          const rest = types[0] === 'multipart/form-data' ? ['file'] : ['payload'];
          for (const name of Object.keys(documented.properties).filter((n) => !rest.includes(n)))
            assert.deepEqual(op.body!.schema.properties[name], documented.properties[name], `${id} ${name}`);
        }
        checked++;
      }
    }
    assert.ok(checked >= 25, `only ${checked} bodies`);
  });

  const title = 'answers valid and schema-invalid requests to every operation';
  it(title, async () => {
    const failures: string[] = [];
    for (const op of ops) {
      const failure = await runProperty(title, op.id, requestArb(op, t.callers), SETTINGS.runs, t);
      if (failure) failures.push(failure);
    }
    assert.equal(failures.length, 0, `\n${failures.join('\n\n')}`);
  });

  it('answers each reported hostile request (issue 14) in shape', async () => {
    const failures: string[] = [];
    for (const [i, example] of HOSTILE_EXAMPLES.entries()) {
      const op = ops.find((o) => o.id === example.operation);
      assert.ok(op, `no operation ${example.operation}`);
      const headers = { Accept: 'application/json', Authorization: `Bearer ${t.planner}`, ...example.headers };
      try {
        await exerciseRequest(
          t,
          op,
          { operation: op.id, kind: `example ${i}`, method: example.method, path: example.path, headers, body: example.body },
          'demo planner *',
        );
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    assert.equal(failures.length, 0, `\n${failures.join('\n\n')}`);
  });

  for (const cls of HOSTILE_CLASSES) {
    const hostileTitle = `answers hostile class ${cls.id} on every operation it applies to`;
    it(hostileTitle, async () => {
      const failures: string[] = [];
      const runs = Math.max(2, Math.ceil(SETTINGS.runs / 3));
      for (const op of ops.filter((o) => cls.applies(o))) {
        const failure = await runProperty(hostileTitle, `${cls.id} ${op.id}`, hostileArb(cls, requestArb(op, t.callers)), runs, t);
        if (failure) failures.push(failure);
      }
      assert.equal(failures.length, 0, `\n${failures.join('\n\n')}`);
    });
  }

  it('is healthy, ready and within its memory bound afterwards', async () => {
    const health = await healthOf(t);
    assert.equal(health.healthz, 200);
    assert.equal(health.readyz, 200);
    assert.ok(health.ms < 2000, `health probes took ${Math.round(health.ms)} ms`);
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    const rssGrowth = mb(rss.stop() - rssBefore);
    const heapGrowth = mb(heapAfterGc() - heapBefore);
    if (process.env.FUZZ_VERBOSE === '1') console.log(`memory: peak RSS +${rssGrowth} MB, heap after GC +${heapGrowth} MB`);
    assert.ok(rssGrowth < SETTINGS.rssGrowthMb, `peak RSS grew ${rssGrowth} MB (bound ${SETTINGS.rssGrowthMb} MB)`);
    assert.ok(heapGrowth < SETTINGS.heapGrowthMb, `heap after GC grew ${heapGrowth} MB (bound ${SETTINGS.heapGrowthMb} MB)`);
  });
});
