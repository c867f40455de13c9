/**
 * Broadcasts the tokens service publishes on the bus after a change is stored, so every
 * gateway process drops what it cached about the affected tokens before the next request.
 */
export const TOKEN_REVOKED = 'tokens.revoked';
/** A user's levels or admin flag, or a tenant's module or limits, changed. */
export const ACCESS_CHANGED = 'tokens.access-changed';

export interface TokenRevokedEvent {
  tenant: string;
  token_id: number;
}

export interface AccessChangedEvent {
  tenant: string;
  /** Absent when the whole tenant changed. */
  user_id?: number;
}

/** What the tokens service tells every gateway after a change is stored. */
export interface IdentityEvents {
  tokenRevoked(event: TokenRevokedEvent): Promise<void>;
  accessChanged(event: AccessChangedEvent): Promise<void>;
}
