import type { AccessChangedEvent, TokenRevokedEvent } from '@supply/contracts';

/** What the tokens service tells every gateway after a change is stored (the topics are in the contracts). */
export interface IdentityEvents {
  tokenRevoked(event: TokenRevokedEvent): Promise<void>;
  accessChanged(event: AccessChangedEvent): Promise<void>;
}
