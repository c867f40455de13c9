import assert from 'node:assert/strict';
import { deliveryCountOf, supportsAtLeastOnceDeadLetters, workQueueArguments } from './amqp.js';

type Message = Parameters<typeof deliveryCountOf>[0];
const message = (headers: Record<string, unknown> | undefined, redelivered = false): Message =>
  ({ fields: { redelivered }, properties: { headers } }) as unknown as Message;

describe('amqp bus helpers', () => {
  it('maps x-delivery-count (returns so far) to a 1-based deliveryCount', () => {
    assert.equal(deliveryCountOf(message(undefined)), 1);
    assert.equal(deliveryCountOf(message({})), 1);
    assert.equal(deliveryCountOf(message({ 'x-delivery-count': 1 }, true)), 2);
    assert.equal(deliveryCountOf(message({ 'x-delivery-count': 4 }, true)), 5);
  });

  it('counts a redelivery without the header (classic queue) as at least the second', () => {
    assert.equal(deliveryCountOf(message({}, true)), 2);
  });

  it('declares quorum work queues that run the handler maxDeliveries times, then dead-letter', () => {
    assert.deepEqual(workQueueArguments('ns.jobs', 'ns.dead-letter', 5, true), {
      'x-queue-type': 'quorum',
      'x-delivery-limit': 4,
      'x-dead-letter-exchange': 'ns.dead-letter',
      'x-dead-letter-routing-key': 'ns.jobs',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
    const older = workQueueArguments('jobs', 'dead-letter', 1, false);
    assert.equal(older['x-delivery-limit'], 0);
    assert.equal('x-dead-letter-strategy' in older, false);
  });

  it('uses at-least-once dead-lettering from RabbitMQ 3.10 on', () => {
    assert.equal(supportsAtLeastOnceDeadLetters('3.9.29'), false);
    assert.equal(supportsAtLeastOnceDeadLetters('3.10.8'), true);
    assert.equal(supportsAtLeastOnceDeadLetters('3.13.0'), true);
    assert.equal(supportsAtLeastOnceDeadLetters('4.1.2'), true);
    assert.equal(supportsAtLeastOnceDeadLetters(''), false);
  });
});
