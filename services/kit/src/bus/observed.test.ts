import assert from 'node:assert/strict';
import { currentContext, runWithContext } from '../context.js';
import { Metrics } from '../metrics/metrics.js';
import type { Bus, ConsumeOptions, Delivery, MessageEnvelope, SendOptions, WorkHandler } from './bus.js';
import { observeBus } from './observed.js';

/** A bus that records sends and lets the test deliver by hand. */
function fakeBus() {
  const sent: Array<{ queue: string; body: unknown; options?: SendOptions }> = [];
  const handlers = new Map<string, WorkHandler>();
  const hooks = new Map<string, ConsumeOptions['onDeadLetter']>();
  const bus = {
    async send(queue: string, body: unknown, options?: SendOptions) {
      sent.push({ queue, body, options });
    },
    async consume(queue: string, handler: WorkHandler, options?: ConsumeOptions) {
      handlers.set(queue, handler);
      hooks.set(queue, options?.onDeadLetter);
      return { close: async () => undefined };
    },
  } as unknown as Bus;
  const deliver = (queue: string, delivery: Delivery, envelope?: MessageEnvelope) => handlers.get(queue)!('body', delivery, envelope);
  return { bus, sent, deliver, hooks };
}

const count = async (metrics: Metrics, queue: string, outcome: string): Promise<number> => {
  const json = await metrics.busMessages.get();
  return json.values.find((v) => v.labels.queue === queue && v.labels.outcome === outcome)?.value ?? 0;
};

describe('observed bus', () => {
  it('adds the request id and tenant to a send made inside a request, and nothing outside one', async () => {
    const { bus, sent } = fakeBus();
    const observed = observeBus(bus, { maxDeliveries: 3 });
    await runWithContext({ requestId: 'r-1', tenant: 'demo' }, () => observed.send('q', 1, { messageId: 'm' }));
    await observed.send('q', 2);
    assert.deepEqual(sent[0]!.options, { messageId: 'm', headers: { 'x-request-id': 'r-1', 'x-tenant': 'demo' } });
    assert.equal(sent[1]!.options, undefined);
    // A consumer's own sends pass on the request id and the tenant it logs.
    await runWithContext({ requestId: 'r-2', originTenant: 'demo' }, () => observed.send('q', 3));
    assert.deepEqual(sent[2]!.options, { headers: { 'x-request-id': 'r-2', 'x-tenant': 'demo' } });
  });

  it('restores the context around the handler and counts published, delivered, acknowledged, retried and dead-lettered per queue', async () => {
    const { bus, deliver } = fakeBus();
    const metrics = new Metrics({ defaultMetrics: false });
    const observed = observeBus(bus, { metrics, maxDeliveries: 3 });
    await observed.send('jobs', 'x');
    let fail = false;
    const seen: Array<string | undefined> = [];
    await observed.consume('jobs', async () => {
      seen.push(currentContext()?.requestId);
      if (fail) throw new Error('boom');
    });
    await deliver(
      'jobs',
      { messageId: 'a', deliveryCount: 1 },
      { headers: { 'x-request-id': 'r-9', 'x-tenant': 'demo' }, sentAt: Date.now() - 1500 },
    );
    fail = true;
    await assert.rejects(deliver('jobs', { messageId: 'b', deliveryCount: 1 }, { headers: {} }));
    await assert.rejects(deliver('jobs', { messageId: 'b', deliveryCount: 3 }, { headers: {} }));
    assert.deepEqual(seen, ['r-9', undefined, undefined]);
    assert.equal(await count(metrics, 'jobs', 'published'), 1);
    assert.equal(await count(metrics, 'jobs', 'delivered'), 3);
    assert.equal(await count(metrics, 'jobs', 'acknowledged'), 1);
    assert.equal(await count(metrics, 'jobs', 'retried'), 1);
    assert.equal(await count(metrics, 'jobs', 'dead_lettered'), 1);
    const age = await metrics.busMessageAge.get();
    const ageSum = age.values.find((v) => v.metricName === 'supply_bus_message_age_seconds_sum')!.value;
    assert.ok(ageSum >= 1.5 && ageSum < 10, String(ageSum));
  });

  it("counts each dead letter the adapter reports, also one no handler failure showed, and still runs the consumer's own hook", async () => {
    const { bus, hooks } = fakeBus();
    const metrics = new Metrics({ defaultMetrics: false });
    const observed = observeBus(bus, { metrics, maxDeliveries: 3 });
    const told: unknown[] = [];
    await observed.consume('plain', async () => undefined);
    await observed.consume('hooked', async () => undefined, { onDeadLetter: async (_body, _delivery, err) => void told.push(err) });
    const failure = new Error('its last allowed delivery never finished');
    await hooks.get('plain')!('b', { messageId: 'm', deliveryCount: 3 }, failure);
    await hooks.get('hooked')!('b', { messageId: 'n', deliveryCount: 3 }, failure);
    assert.equal(await count(metrics, 'plain', 'dead_lettered'), 1);
    assert.equal(await count(metrics, 'hooked', 'dead_lettered'), 1);
    assert.deepEqual(told, [failure]);
  });
});
