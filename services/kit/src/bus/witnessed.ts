import { randomUUID } from 'node:crypto';
import type { Logger } from '../log';
import type { Bus, Subscription } from './bus';

/** The field a witnessed broadcast carries so its publisher can recognise it; subscribers ignore it. */
export interface Witnessed {
  witness?: string;
}

export interface WitnessedPublisher {
  /**
   * Publishes `event` on `topic` and resolves once the broadcast has come back round the bus to
   * this process, or after the wait bound (then it logs a warning). Never throws: a bus failure
   * is logged, because the subscribers' caches carry a short safety TTL for a lost broadcast.
   */
  publish(topic: string, event: object): Promise<void>;
  close(): Promise<void>;
}

/**
 * Broadcasts that invalidate caches in other processes (token revocations, reference writes)
 * must be in every subscriber's hands before the change is answered, or the caller's next
 * request can still meet the stale entry on another replica. A fanout hands every
 * subscriber's copy out at the same moment, so a publisher that also subscribes and waits
 * for its own copy knows the others have theirs: the change then holds from the very next
 * request, on any replica, without tracking who the subscribers are.
 */
export async function witnessedPublisher(bus: Bus, topics: readonly string[], logger: Logger, waitMs = 2_000): Promise<WitnessedPublisher> {
  const waiting = new Map<string, () => void>();
  const seen = (event: Witnessed) => {
    if (event.witness) waiting.get(event.witness)?.();
  };
  const subscriptions: Subscription[] = await Promise.all(topics.map((topic) => bus.subscribe<Witnessed>(topic, seen)));
  return {
    async publish(topic, event) {
      const id = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const back = new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        timer = setTimeout(() => {
          logger.warn({ topic, waitMs }, 'broadcast not seen back within the wait; subscribers may answer from cache until it arrives');
          resolve();
        }, waitMs);
      });
      try {
        await bus.publish(topic, { ...event, witness: id });
        await back;
      } catch (err) {
        logger.error({ err, topic }, 'broadcast not published');
      } finally {
        clearTimeout(timer);
        waiting.delete(id);
      }
    },
    async close() {
      await Promise.all(subscriptions.map((s) => s.close()));
    },
  };
}
