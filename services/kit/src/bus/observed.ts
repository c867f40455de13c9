/**
 * What every bus behind openBus adds to an adapter: the sender's request id and tenant
 * travel in message headers and are restored around the consumer's handler (so its log
 * lines carry them, and calls naming no other id carry the request id), and each work-queue
 * outcome is counted.
 */
import { currentContext, runWithContext, type RequestContext } from '../context.js';
import { MD } from '../grpc/metadata.js';
import { secondsSince, type Metrics } from '../metrics/metrics.js';
import { consumeInSpan, produceInSpan, tracingEnabled } from '../tracing/tracing.js';
import type { Bus, ConsumeOptions, SendOptions, WorkHandler } from './bus.js';

/** Headers naming the request a message was sent for. */
export function contextHeaders(ctx: RequestContext | undefined = currentContext()): Record<string, string> | undefined {
  if (!ctx?.requestId) return undefined;
  // A consumer passes on the tenant it logs, so the next hop logs it too.
  const tenant = ctx.tenant ?? ctx.originTenant;
  return tenant ? { [MD.requestId]: ctx.requestId, [MD.tenant]: tenant } : { [MD.requestId]: ctx.requestId };
}

/**
 * The context a delivery runs in when its headers name the request it was sent for: that
 * request's id, and its tenant for log lines only. It acts for nobody (no tenant, no
 * principal): the handler names whom its calls act for.
 */
export function contextOfHeaders(headers: Record<string, string> | undefined): RequestContext | undefined {
  const requestId = headers?.[MD.requestId];
  if (!requestId) return undefined;
  const tenant = headers[MD.tenant];
  return tenant ? { requestId, originTenant: tenant } : { requestId };
}

export function observeBus(bus: Bus, opts: { metrics?: Metrics; maxDeliveries: number }): Bus {
  const { metrics, maxDeliveries } = opts;
  /** Work queues this process sends to or consumes, for the queue gauges. */
  const queues = new Set<string>();
  const queueStats = bus.queueStats?.bind(bus);
  if (metrics && queueStats) {
    metrics.watchQueues(async () => {
      const looked = await Promise.all(
        [...queues].map((queue) =>
          queueStats(queue).then(
            (s) => ({ queue, ...s }),
            () => null,
          ),
        ),
      );
      return looked.filter((s) => s !== null);
    });
  }
  return {
    async send<T>(queue: string, body: T, options?: SendOptions) {
      queues.add(queue);
      const send = (headers: Record<string, string> | undefined) =>
        bus.send(queue, body, headers ? { ...options, headers: { ...headers, ...options?.headers } } : options);
      // Inside a trace the send is a producer span, and its context goes in the headers for the consumer span.
      await (tracingEnabled() ? produceInSpan(queue, 'send', (trace) => send({ ...contextHeaders(), ...trace })) : send(contextHeaders()));
      metrics?.bus(queue, 'published');
    },
    consume<T>(queue: string, handler: WorkHandler<T>, options?: Parameters<Bus['consume']>[2]) {
      queues.add(queue);
      metrics?.expectQueue(queue);
      const wrapped: WorkHandler<T> = async (body, delivery, envelope) => {
        metrics?.bus(queue, 'delivered');
        if (metrics && envelope?.sentAt !== undefined && delivery.deliveryCount === 1) {
          metrics.busMessageAge.observe({ queue }, Math.max(0, Date.now() - envelope.sentAt) / 1000);
        }
        const started = process.hrtime.bigint();
        const ctx = contextOfHeaders(envelope?.headers);
        const handle = () => (ctx ? runWithContext(ctx, () => handler(body, delivery, envelope)) : handler(body, delivery, envelope));
        try {
          await consumeInSpan(queue, envelope?.headers, handle);
          metrics?.bus(queue, 'acknowledged');
        } catch (err) {
          // The adapter's own verdict: a retryable failure is retried for the outage window whatever the delivery count.
          const dead = delivery.willDeadLetter ? delivery.willDeadLetter(err) : delivery.deliveryCount >= maxDeliveries;
          if (!dead) metrics?.bus(queue, 'retried');
          // An adapter reports each dead letter through onDeadLetter below; a hand-made delivery has no adapter to.
          else if (!delivery.willDeadLetter) metrics?.bus(queue, 'dead_lettered');
          throw err;
        } finally {
          metrics?.busHandlerDuration.observe({ queue }, secondsSince(started));
        }
      };
      // Every dead letter passes here, also one whose last delivery died with its process (no handler failure to see).
      const onDeadLetter: ConsumeOptions['onDeadLetter'] = async (body, delivery, error) => {
        metrics?.bus(queue, 'dead_lettered');
        await options?.onDeadLetter?.(body, delivery, error);
      };
      return bus.consume(queue, wrapped, { ...options, onDeadLetter });
    },
    // A broadcast carries no headers (its subscribers start no span), but where it was published shows in the trace.
    publish: (topic, event) =>
      tracingEnabled() ? produceInSpan(topic, 'publish', () => bus.publish(topic, event)) : bus.publish(topic, event),
    subscribe: (topic, handler, options) => bus.subscribe(topic, handler, options),
    deadLetters: (queue, limit) => bus.deadLetters(queue, limit),
    replayDeadLetters: (queue, limit) => bus.replayDeadLetters(queue, limit),
    ...(queueStats && { queueStats }),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}
