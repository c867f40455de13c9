import { randomUUID } from 'node:crypto';
import { WITNESS_ACKS, WITNESS_MEMBERS, WITNESS_ROLL_CALL, type Topic, type WitnessAck, type WitnessMember } from '@supply/contracts';
import type { Logger } from '../log';
import type { BroadcastOutcome, Metrics } from '../metrics/metrics';
import type { Bus, Subscription } from './bus';

/**
 * Broadcasts that invalidate caches in other processes (token revocations, access changes,
 * reference writes) must be applied by every subscriber before the change is answered, or the
 * caller's next request can still meet the stale entry on another replica. A fanout hands the
 * copies out together, but each subscriber takes its own from its own connection on its own
 * event loop, so "my copy came back" says nothing about the others. So each subscriber
 * acknowledges what it applied, and the publisher waits for every subscriber it knows of:
 *
 * - A subscriber (`subscribeWitnessed`) announces itself on WITNESS_MEMBERS when it attaches, on
 *   a heartbeat, and when a publisher starts and calls the roll; it says `leaving` on close.
 *   After its handler has run on a broadcast that carries a `witness` id, it publishes an ack.
 * - A publisher (`witnessedPublisher`) keeps the roster of members heard within three
 *   heartbeats, stamps each broadcast with a fresh witness id and resolves once every member
 *   of that topic has acknowledged it, or after the wait bound. A member that misses the
 *   bound is dropped from the roster (a dead process costs one wait, not one per write) until
 *   its next heartbeat brings it back; a warning names how many were missing.
 *
 * Broadcasts stay best effort: what a lost broadcast leaves behind is bounded by the
 * subscribers' short cache TTL.
 */

/** The field a witnessed broadcast carries so its subscribers know to acknowledge it. */
export interface Witnessed {
  witness?: string;
}

export interface WitnessOptions {
  /** How long a publisher waits for the acknowledgements (default 2 s). */
  waitMs?: number;
  /** How often a subscriber announces itself (default 10 s); a member unheard for three is forgotten. */
  heartbeatMs?: number;
  /** Counts each broadcast's outcome and times its wait (`supply_broadcasts_total`, `supply_broadcast_wait_seconds`). */
  metrics?: Metrics;
}

const DEFAULT_WAIT_MS = 2_000;
const DEFAULT_HEARTBEAT_MS = 10_000;
const LEAVING_BOUND_MS = 1_000;

export interface WitnessedPublisher {
  /**
   * Publishes `event` on `topic` and resolves once every known subscriber of the topic has
   * acknowledged it, or after the wait bound (then it logs a warning). Never throws: a bus
   * failure is logged, because the subscribers' caches carry a short safety TTL.
   */
  publish(topic: string, event: object): Promise<void>;
  /** Members currently expected to acknowledge `topic` (for tests and diagnostics). */
  members(topic: string): number;
  close(): Promise<void>;
}

interface Member {
  topics: ReadonlySet<string>;
  heardAt: number;
}

interface Pending {
  missing: Set<string>;
  done: () => void;
}

export async function witnessedPublisher(
  bus: Bus,
  topics: readonly string[],
  logger: Logger,
  options: WitnessOptions = {},
): Promise<WitnessedPublisher> {
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const forgetAfterMs = 3 * (options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  const ours = new Set(topics);
  const roster = new Map<string, Member>();
  const pending = new Map<string, Pending>();

  const expected = (topic: string): string[] => {
    const now = Date.now();
    const ids: string[] = [];
    for (const [id, member] of roster) {
      if (now - member.heardAt > forgetAfterMs) roster.delete(id);
      else if (member.topics.has(topic)) ids.push(id);
    }
    return ids;
  };

  const subscriptions: Subscription[] = await Promise.all([
    bus.subscribe(WITNESS_MEMBERS, (m) => {
      if (typeof m?.member !== 'string') return;
      if (m.kind === 'leaving') {
        roster.delete(m.member);
        // A member that leaves will not acknowledge what it was sent.
        for (const p of pending.values()) if (p.missing.delete(m.member) && p.missing.size === 0) p.done();
        return;
      }
      const relevant = Array.isArray(m.topics) ? m.topics.filter((t) => ours.has(t)) : [];
      if (relevant.length > 0) roster.set(m.member, { topics: new Set(relevant), heardAt: Date.now() });
    }),
    bus.subscribe(WITNESS_ACKS, (ack) => {
      const p = typeof ack?.witness === 'string' ? pending.get(ack.witness) : undefined;
      if (p && p.missing.delete(ack.member) && p.missing.size === 0) p.done();
    }),
  ]);
  // Members that started before this publisher announce themselves now rather than at their next heartbeat
  // (not awaited: a stalled broker must not hold the service's start).
  void bus.publish(WITNESS_ROLL_CALL, {}).catch((err: unknown) => logger.warn({ err }, 'witness roll call not published'));

  return {
    async publish(topic, event) {
      const witness = randomUUID();
      const missing = new Set(expected(topic));
      let timer: NodeJS.Timeout | undefined;
      // The whole wait is bounded, the bus's own confirm included: a stalled broker must not hold the change's answer.
      const bound = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
      const acknowledged = new Promise<'acknowledged'>((resolve) => {
        if (missing.size === 0) resolve('acknowledged');
        else pending.set(witness, { missing, done: () => resolve('acknowledged') });
      });
      let published = false;
      const started = process.hrtime.bigint();
      let outcome: BroadcastOutcome = 'acknowledged';
      const sent = bus.publish(topic, { ...event, witness }).then(
        () => void (published = true),
        (err: unknown) => {
          logger.error({ err, topic }, 'broadcast not published');
          return 'failed' as const;
        },
      );
      try {
        const ended = await Promise.race([sent.then((failed) => failed ?? acknowledged), bound]);
        if (ended === 'failed') outcome = 'failed';
        if (ended !== 'late') return;
        if (!published) {
          outcome = 'unconfirmed';
          logger.warn(
            { topic, waitMs },
            'broadcast not confirmed by the bus within the wait; subscribers may answer from cache until it arrives',
          );
          return;
        }
        outcome = 'unacknowledged';
        for (const id of missing) roster.delete(id);
        logger.warn(
          { topic, waitMs, missing: missing.size },
          'broadcast not acknowledged by every subscriber within the wait; they are dropped from the roster until they announce themselves again',
        );
      } finally {
        clearTimeout(timer);
        pending.delete(witness);
        options.metrics?.broadcast(topic, outcome, started);
      }
    },
    members: (topic) => expected(topic).length,
    async close() {
      for (const p of pending.values()) p.done();
      await Promise.all(subscriptions.map((s) => s.close()));
    },
  };
}

/**
 * Subscribes `handler` to a witnessed topic as one member of the witness protocol: it
 * announces itself, answers roll calls, beats its heart, and acknowledges each witnessed
 * broadcast after the handler has applied it (a handler that throws is not acknowledged, so
 * the publisher waits out its bound and warns).
 */
export async function subscribeWitnessed<T>(
  bus: Bus,
  topic: Topic<T>,
  handler: (event: T) => void | Promise<void>,
  logger: Logger,
  options: Pick<WitnessOptions, 'heartbeatMs'> & {
    /** The subscription lost broadcasts (a reconnect, see SubscribeOptions.onGap): drop whatever they keep true. */
    onGap?: () => void;
  } = {},
): Promise<Subscription> {
  const member = randomUUID();
  const announce = (kind: WitnessMember['kind']): Promise<void> =>
    bus
      .publish(WITNESS_MEMBERS, { member, kind, topics: [topic] })
      .catch((err: unknown) => logger.warn({ err, topic }, 'witness announcement not published'));
  const subscriptions = await Promise.all([
    bus.subscribe(
      topic as Topic<T & Witnessed>,
      async (event) => {
        await handler(event);
        if (typeof event?.witness !== 'string') return;
        const ack: WitnessAck = { witness: event.witness, member };
        await bus.publish(WITNESS_ACKS, ack).catch((err: unknown) => logger.warn({ err, topic }, 'witness acknowledgement not published'));
      },
      {
        onGap: () => {
          logger.warn({ topic }, 'broadcasts may have been missed while the bus was away; dropping what they keep true');
          options.onGap?.();
          // A publisher that waited for this member in the meantime has dropped it from its roster.
          void announce('here');
        },
      },
    ),
    bus.subscribe(WITNESS_ROLL_CALL, () => announce('here')),
  ]);
  await announce('here');
  // One announcement in flight at a time: while the broker is away, a send waits for it.
  let beating: Promise<void> | undefined;
  const heartbeat = setInterval(() => {
    beating ??= announce('here').finally(() => (beating = undefined));
  }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  heartbeat.unref();
  return {
    async close() {
      clearInterval(heartbeat);
      // Saying goodbye spares publishers one wait; it must not hold a shutdown up while the broker is away.
      // A heartbeat still on its way goes first, or it could land after the goodbye and list the member again.
      let bound: NodeJS.Timeout | undefined;
      const goodbye = (beating ?? Promise.resolve()).then(() => announce('leaving'));
      await Promise.race([goodbye, new Promise<void>((resolve) => (bound = setTimeout(resolve, LEAVING_BOUND_MS)))]);
      clearTimeout(bound);
      await Promise.all(subscriptions.map((s) => s.close()));
    },
  };
}
