import { witnessedPublisher, type Bus, type Logger, type Metrics } from '@supply/kit';
import { ACCESS_CHANGED, TOKEN_REVOKED } from '@supply/contracts';
import type { IdentityEvents } from './events';

/**
 * Revocations and access changes, answered only once every gateway has the broadcast (see
 * witnessedPublisher): a revoked token is refused on the very next request on any replica,
 * including after a revocation made outside the gateway (the operator's CLI).
 */
export async function busEvents(bus: Bus, logger: Logger, metrics?: Metrics): Promise<{ events: IdentityEvents; close(): Promise<void> }> {
  const publisher = await witnessedPublisher(bus, [TOKEN_REVOKED, ACCESS_CHANGED], logger, { metrics });
  return {
    events: {
      tokenRevoked: (event) => publisher.publish(TOKEN_REVOKED, event),
      accessChanged: (event) => publisher.publish(ACCESS_CHANGED, event),
    },
    close: () => publisher.close(),
  };
}
