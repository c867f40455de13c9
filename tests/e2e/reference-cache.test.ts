import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAmqpBus } from '@supply/kit';
import { REFERENCE_CHANGED, type ReferenceChangedEvent } from '@supply/contracts';
import { missingBackend } from '../support/require';
import { api, startSystem, type TestSystem } from '../support/system';
import { eventually, extraGateway, freshTenant, rateLimitOf } from './metering-support';

const AMQP_URL = process.env.AMQP_URL;

const names = (res: { body: any }) => (res.body.data as Array<{ name: string }>).map((u) => u.name).sort();

describe('reference read cache (all-in-one, embedded bus)', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  // A long safety TTL, so only invalidation can make a write visible.
  before(async () => {
    sys = await startSystem({ env: { REFERENCE_CACHE_TTL_MS: '600000' } });
  });
  after(() => sys?.stop());

  it('answers If-None-Match with a 304 without a body that still spends its credit and carries the meter headers', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 100, window: 60, credits: 1000 });
    const t = await token();
    const first = await api(sys, `/${slug}/api/v1/uoms`, { token: t });
    assert.equal(first.status, 200, first.text);
    const etag = first.headers.get('etag');
    assert.ok(etag, 'a reference read carries an ETag');
    const again = await api(sys, `/${slug}/api/v1/uoms`, { token: t });
    assert.equal(again.text, first.text, 'a cached answer is the same bytes');
    assert.equal(again.headers.get('etag'), etag);
    // fetch adds `Cache-Control: no-cache` to a request with If-None-Match unless one is given, and no-cache asks for a full answer.
    const conditional = { 'If-None-Match': etag!, 'Cache-Control': 'max-age=0' };
    const notModified = await api(sys, `/${slug}/api/v1/uoms`, { token: t, headers: conditional });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.text, '');
    assert.equal(
      Number(again.headers.get('credits-remaining')) - Number(notModified.headers.get('credits-remaining')),
      1,
      'a 304 spends a read',
    );
    assert.equal(rateLimitOf(again.headers).r - rateLimitOf(notModified.headers).r, 1, 'a 304 takes a rate slot');
    const otherTag = await api(sys, `/${slug}/api/v1/uoms`, { token: t, headers: { ...conditional, 'If-None-Match': 'W/"nope"' } });
    assert.equal(otherTag.status, 200);
    // Gates still run on a cached answer: a token without the read scope is refused.
    const unscoped = await api(sys, `/${slug}/api/v1/uoms`, { token: await token(['public_api.write']) });
    assert.equal(unscoped.status, 403, unscoped.text);
  });

  it('shows a POST and a PATCH to the next read, and the old tag no longer matches', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 100, window: 60, credits: 1000 });
    const t = await token();
    const before = await api(sys, `/${slug}/api/v1/uoms?per_page=50`, { token: t });
    assert.equal(before.status, 200);
    const created = await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: t, body: { name: 'Crate', abbreviation: 'cr' } });
    assert.equal(created.status, 201, created.text);
    const afterPost = await api(sys, `/${slug}/api/v1/uoms?per_page=50`, {
      token: t,
      headers: { 'If-None-Match': before.headers.get('etag')!, 'Cache-Control': 'max-age=0' },
    });
    assert.equal(afterPost.status, 200);
    assert.ok(names(afterPost).includes('Crate'));
    const id = created.body.data[0].id;
    const one = await api(sys, `/${slug}/api/v1/uoms/${id}`, { token: t });
    assert.equal(one.body.data[0].name, 'Crate');
    const patched = await api(sys, `/${slug}/api/v1/uoms/${id}`, { method: 'PATCH', token: t, body: { name: 'Big crate' } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await api(sys, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, 'Big crate');
    assert.ok(names(await api(sys, `/${slug}/api/v1/uoms?per_page=50`, { token: t })).includes('Big crate'));
  });

  it('drops the answers on a write that reached the reference service without this gateway (pushed over the bus)', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 100, window: 60, credits: 1000 });
    const t = await token();
    assert.deepEqual(names(await api(sys, `/${slug}/api/v1/uoms`, { token: t })), []);
    await sys.clients.reference.createUoms(
      { records: [{ name: 'Keg', abbreviation: 'kg2' }], array_body: false },
      { context: { requestId: 'test', tenant: slug } },
    );
    await eventually(
      () => api(sys, `/${slug}/api/v1/uoms`, { token: t }),
      (res) => assert.deepEqual(names(res), ['Keg']),
      2_000,
    );
  });
});

describe('reference read cache across two gateways sharing RabbitMQ', function () {
  this.timeout(90_000);
  if (!AMQP_URL) {
    missingBackend('AMQP', 'AMQP_URL is not set');
    return;
  }
  const env = { AMQP_URL, BUS_NAMESPACE: `refcache-${randomBytes(4).toString('hex')}`, REFERENCE_CACHE_TTL_MS: '600000' };
  const dataDir = mkdtempSync(join(tmpdir(), 'refcache-gateway-'));
  let sys: TestSystem;
  let other: Awaited<ReturnType<typeof extraGateway>>;
  before(async () => {
    sys = await startSystem({ env });
    other = await extraGateway(sys, env, dataDir);
  });
  after(async () => {
    if (other?.child.exitCode === null) {
      other.child.kill('SIGTERM');
      await once(other.child, 'exit');
    }
    await sys?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a write through one gateway is visible to the next read through the other', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 200, window: 60, credits: 1000 });
    const t = await token();
    // Both gateways hold the (empty) list.
    for (const gw of [sys, other, sys, other]) assert.deepEqual(names(await api(gw, `/${slug}/api/v1/uoms`, { token: t })), []);
    const created = await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: t, body: { name: 'Tote', abbreviation: 'tt' } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(names(await api(other, `/${slug}/api/v1/uoms`, { token: t })), ['Tote']);
    const id = created.body.data[0].id;
    assert.equal((await api(sys, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, 'Tote');
    assert.equal((await api(other, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, 'Tote');
    const patched = await api(other, `/${slug}/api/v1/uoms/${id}`, { method: 'PATCH', token: t, body: { name: 'Tote bin' } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await api(sys, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, 'Tote bin');
    assert.deepEqual(names(await api(sys, `/${slug}/api/v1/uoms`, { token: t })), ['Tote bin']);
  });

  it('holds write-then-read across the two gateways every time, not only when the other gateway happens to be quick', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 500, window: 60, credits: 5000 });
    const t = await token();
    const created = await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: t, body: { name: 'Bin 0', abbreviation: 'b0' } });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data[0].id;
    for (let round = 1; round <= 12; round++) {
      const [writer, reader] = round % 2 ? [other, sys] : [sys, other];
      // The reader holds the previous name in its cache when the write lands on the writer.
      assert.equal((await api(reader, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, `Bin ${round - 1}`);
      const patched = await api(writer, `/${slug}/api/v1/uoms/${id}`, { method: 'PATCH', token: t, body: { name: `Bin ${round}` } });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await api(reader, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, `Bin ${round}`, `round ${round}`);
    }
  });

  it('answers a write only once the other gateway has applied it, waiting while that gateway is stalled', async () => {
    const { slug, token } = await freshTenant(sys, { rate: 200, window: 60, credits: 1000 });
    const t = await token();
    const created = await api(sys, `/${slug}/api/v1/uoms`, { method: 'POST', token: t, body: { name: 'Pallet', abbreviation: 'pl' } });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data[0].id;
    assert.equal((await api(other, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, 'Pallet');
    // The other gateway's process stops for 400 ms (a long GC pause, a starved container): its copy waits unread.
    other.child.kill('SIGSTOP');
    const resumedAt = Date.now() + 400;
    const resume = setTimeout(() => other.child.kill('SIGCONT'), 400);
    try {
      const patched = await api(sys, `/${slug}/api/v1/uoms/${id}`, { method: 'PATCH', token: t, body: { name: 'Half pallet' } });
      assert.equal(patched.status, 200, patched.text);
      assert.ok(Date.now() >= resumedAt, 'the write was answered while the other gateway could not yet have applied it');
    } finally {
      clearTimeout(resume);
      other.child.kill('SIGCONT');
    }
    assert.equal((await api(other, `/${slug}/api/v1/uoms/${id}`, { token: t })).body.data[0].name, 'Half pallet');
  });

  it('broadcasts a change only when ensuring item-customer-groups created one (imports ensure every batch)', async () => {
    const { slug } = await freshTenant(sys);
    const call = { context: { requestId: 'test', tenant: slug } };
    const heard: string[] = [];
    const listener = await openAmqpBus({ amqpUrl: AMQP_URL!, namespace: env.BUS_NAMESPACE });
    try {
      await listener.subscribe<ReferenceChangedEvent>(REFERENCE_CHANGED, (e) => void heard.push(e.tenant));
      await sys.clients.reference.createUoms({ records: [{ name: 'Each', abbreviation: 'ea' }], array_body: false }, call);
      const item = (await sys.clients.reference.createItems({ records: [{ name: 'I-1', uom: 'ea' }], array_body: false }, call))
        .records[0]!;
      const group = (await sys.clients.reference.createCustomerGroups({ records: [{ name: 'G-1' }], array_body: false }, call)).records[0]!;
      await eventually(
        async () => heard.length,
        (n) => assert.equal(n, 3),
        5_000,
      );
      const keys = [{ item_id: item.id, customer_group_id: group.id }];
      await sys.clients.reference.ensureItemCustomerGroups({ keys }, call);
      await eventually(
        async () => heard.length,
        (n) => assert.equal(n, 4),
        5_000,
      );
      await sys.clients.reference.ensureItemCustomerGroups({ keys }, call);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(heard, [slug, slug, slug, slug], 'ensuring an existing combination broadcasts nothing');
    } finally {
      await listener.close();
    }
  });
});
