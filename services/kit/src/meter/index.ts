/** Opens the meter the options ask for: Redis when `redisUrl` is set, the embedded one otherwise. */
import { MemoryMeter } from './memory.js';
import type { Meter, MeterOptions } from './meter.js';
import { RedisMeter } from './redis.js';

export type { CreditRule, Meter, MeterDecision, MeterOptions, RateLimitRule } from './meter.js';

/** Rejects with `unavailable` when Redis cannot be reached at open; later outages fail calls, not the meter. */
export async function openMeter(options: MeterOptions): Promise<Meter> {
  if (options.redisUrl) {
    return RedisMeter.open({ url: options.redisUrl, namespace: options.namespace });
  }
  return new MemoryMeter();
}
