import { strict as assert } from 'node:assert';
import type { Bus, Logger } from '@supply/kit';
import { busEvents } from './broadcasts';
import { TOKEN_REVOKED } from './events';

/** A bus whose broadcasts reach subscribers `delayMs` after publish resolves, or never. */
function slowBus(delayMs: number | 'never') {
  const subscribers = new Map<string, Array<(e: unknown) => void>>();
  const bus = {
    async publish(topic: string, event: unknown) {
      if (delayMs === 'never') return;
      setTimeout(() => subscribers.get(topic)?.forEach((h) => h(event)), delayMs);
    },
    async subscribe(topic: string, handler: (e: unknown) => void) {
      subscribers.set(topic, [...(subscribers.get(topic) ?? []), handler]);
      return { close: async () => subscribers.set(topic, (subscribers.get(topic) ?? []).filter((h) => h !== handler)) };
    },
  } as unknown as Bus;
  return { bus, subscribers };
}

const warnings: string[] = [];
const logger = { warn: (_: unknown, msg: string) => warnings.push(msg), error: () => {} } as unknown as Logger;

describe('tokens: identity broadcasts', () => {
  it('answers a revocation only once its broadcast has come back round the bus, so every subscriber has it', async () => {
    const { bus } = slowBus(60);
    const { events, close } = await busEvents(bus, logger);
    const gateway: unknown[] = [];
    await bus.subscribe(TOKEN_REVOKED, (e) => void gateway.push(e));
    await events.tokenRevoked({ tenant: 'demo', token_id: 7 });
    assert.equal(gateway.length, 1, 'the other subscriber saw it before the answer');
    assert.deepEqual({ ...(gateway[0] as object), witness: undefined }, { tenant: 'demo', token_id: 7, witness: undefined });
    await close();
  });

  it('gives up waiting after the bound and warns, rather than hang the revocation', async () => {
    const { bus } = slowBus('never');
    const { events, close } = await busEvents(bus, logger, 50);
    const started = performance.now();
    await events.accessChanged({ tenant: 'demo', user_id: 3 });
    assert.ok(performance.now() - started >= 45);
    assert.ok(warnings.some((w) => w.includes('not seen back')));
    await close();
  });
});
