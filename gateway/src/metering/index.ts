import { currentContext, type Bus, type Clients, type Logger, type Meter } from '@supply/kit';
import { USAGE_QUEUE } from '@supply/contracts';
import type { Guard } from '../app';
import { createMeteringHook } from './metering';
import { TenantPolicies } from './policies';
import { UsageRecorder } from './usage-recorder';

export type { MeteredRequest } from './metering';

export interface Metering {
  /** Runs after validation, before the handler (see `createMeteringHook`). */
  hook: Guard;
  /** Runs when the handler refused a metered request: gives its spend back. */
  refund: Guard;
  /** Stops following limit changes and waits (briefly) for usage records still on their way. */
  stop(): Promise<void>;
}

/** Wires the metering step to the meter, the tokens service (limits, recorded use) and the bus. */
export async function createMetering(deps: { meter: Meter; bus: Bus; clients: Clients; logger: Logger; now(): Date }): Promise<Metering> {
  const { clients, bus } = deps;
  // A tenant's limits, shared by all its requests: the call acts for no user, and names the request that needed it for the logs.
  const call = (tenant: string) => ({ context: { requestId: currentContext()?.requestId ?? 'metering', tenant } });
  const policies = new TenantPolicies({
    async fetchLimits(tenant) {
      const t = await clients.tokens.getTenant({ slug: tenant }, call(tenant));
      return { rateLimit: t.rate_limit, rateWindowSeconds: t.rate_window_seconds, monthlyCredits: t.monthly_credits };
    },
    fetchUsed: async (tenant, period) => (await clients.tokens.getCredits({ period }, call(tenant))).used,
  });
  const following = await policies.follow(bus, deps.logger);
  const usage = new UsageRecorder({
    send: (batch) => bus.send(USAGE_QUEUE, batch, { messageId: batch.id }),
    logger: deps.logger,
  });
  const hooks = createMeteringHook({ meter: deps.meter, policies, record: (r) => usage.record(r), logger: deps.logger, now: deps.now });
  return {
    ...hooks,
    async stop() {
      await following.close();
      await usage.drain();
    },
  };
}
