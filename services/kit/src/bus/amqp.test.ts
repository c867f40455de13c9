import assert from 'node:assert/strict';
import { deliveryCountOf, failureHistoryOf, retryQueueArguments, supportsAtLeastOnceDeadLetters, workQueueArguments } from './amqp.js';

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

  it('adds the deliveries a copy from the retry queue carries, and reads its failure history', () => {
    assert.equal(deliveryCountOf(message({ 'x-prior-deliveries': 2 })), 3);
    assert.equal(deliveryCountOf(message({ 'x-prior-deliveries': 2, 'x-delivery-count': 1 }, true)), 4);
    assert.deepEqual(failureHistoryOf(message({ 'x-prior-deliveries': 0, 'x-retries': 7, 'x-first-failure-at': 1_700_000_000_000 })), {
      deliveryCount: 1,
      retries: 7,
      firstFailureAt: 1_700_000_000_000,
    });
    assert.deepEqual(failureHistoryOf(message(undefined)), { deliveryCount: 1, retries: 0, firstFailureAt: null });
  });

  it('returns expired retries to the work queue through the default exchange', () => {
    assert.deepEqual(retryQueueArguments('ns.jobs'), { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'ns.jobs' });
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
