import { strict as assert } from 'node:assert';
import type { Bus } from './bus';
import type { Logger } from '../log';
import { witnessedPublisher } from './witnessed';

/** A bus whose broadcasts reach subscribers `delayMs` after publish resolves, or never. */
function slowBus(delayMs: number | 'never'): Bus {
  const subscribers = new Map<string, Array<(e: unknown) => void>>();
  return {
    async publish(topic: string, event: unknown) {
      if (delayMs === 'never') return;
      setTimeout(() => subscribers.get(topic)?.forEach((h) => h(event)), delayMs);
    },
    async subscribe(topic: string, handler: (e: unknown) => void) {
      subscribers.set(topic, [...(subscribers.get(topic) ?? []), handler]);
      return {
        close: async () =>
          void subscribers.set(
            topic,
            (subscribers.get(topic) ?? []).filter((h) => h !== handler),
          ),
      };
    },
  } as unknown as Bus;
}

const warnings: string[] = [];
const logger = { warn: (_: unknown, msg: string) => warnings.push(msg), error: () => {} } as unknown as Logger;

describe('kit bus: witnessed broadcasts', () => {
  it('resolves only once the broadcast has come back round the bus, so every other subscriber has it', async () => {
    const bus = slowBus(60);
    const publisher = await witnessedPublisher(bus, ['tokens.revoked'], logger);
    const gateway: Array<Record<string, unknown>> = [];
    await bus.subscribe<Record<string, unknown>>('tokens.revoked', (e) => void gateway.push(e));
    await publisher.publish('tokens.revoked', { tenant: 'demo', token_id: 7 });
    assert.equal(gateway.length, 1, 'the other subscriber saw it before publish resolved');
    assert.equal(gateway[0]!.token_id, 7);
    assert.equal(typeof gateway[0]!.witness, 'string');
    await publisher.close();
  });

  it('gives up waiting after the bound and warns, rather than hold the change back', async () => {
    const publisher = await witnessedPublisher(slowBus('never'), ['tokens.access-changed'], logger, 50);
    const started = performance.now();
    await publisher.publish('tokens.access-changed', { tenant: 'demo', user_id: 3 });
    assert.ok(performance.now() - started >= 45);
    assert.ok(warnings.some((w) => w.includes('not seen back')));
    await publisher.close();
  });
});
