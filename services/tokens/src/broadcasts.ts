import { randomUUID } from 'node:crypto';
import type { Bus, Logger } from '@supply/kit';
import { ACCESS_CHANGED, TOKEN_REVOKED, type IdentityEvents } from './events';

/**
 * Publishes each change and answers once the broadcast has come back round the broker to
 * this process: fanout hands every subscriber's copy out at once, so by then each gateway
 * has it too and the revocation holds for the very next request on any replica.
 * Waiting is bounded by `witnessMs`; a bus failure is logged, not fatal, because the
 * gateways' short cache TTL still bounds how long a stale entry lives.
 */
export async function busEvents(bus: Bus, logger: Logger, witnessMs = 2_000): Promise<{ events: IdentityEvents; close(): Promise<void> }> {
  const waiting = new Map<string, () => void>();
  const witness = (event: { witness?: string }) => {
    if (event.witness) waiting.get(event.witness)?.();
  };
  const subscriptions = await Promise.all([bus.subscribe(TOKEN_REVOKED, witness), bus.subscribe(ACCESS_CHANGED, witness)]);
  const publish = async (topic: string, event: object) => {
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<void>((resolve) => {
      waiting.set(id, resolve);
      timer = setTimeout(() => {
        logger.warn({ topic }, 'identity event not seen back within the wait; gateways may answer from cache until it arrives');
        resolve();
      }, witnessMs);
    });
    try {
      await bus.publish(topic, { ...event, witness: id });
      await seen;
    } catch (err) {
      logger.error({ err, topic }, 'identity event not published');
    } finally {
      clearTimeout(timer);
      waiting.delete(id);
    }
  };
  return {
    events: {
      tokenRevoked: (event) => publish(TOKEN_REVOKED, event),
      accessChanged: (event) => publish(ACCESS_CHANGED, event),
    },
    close: async () => {
      await Promise.all(subscriptions.map((s) => s.close()));
    },
  };
}
