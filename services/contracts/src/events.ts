/**
 * Broadcasts that keep every gateway's caches true: the owner publishes one after a change is
 * stored, and each gateway drops what it cached before its next request.
 */
import { topic } from './queues';

export interface TokenRevokedEvent {
  tenant: string;
  token_id: number;
}

export interface AccessChangedEvent {
  tenant: string;
  /** Absent when the whole tenant changed. */
  user_id?: number;
}

export interface ReferenceChangedEvent {
  tenant: string;
}

/** The tokens service revoked a token. */
export const TOKEN_REVOKED = topic<TokenRevokedEvent>('tokens.revoked');
/** A user's levels or admin flag, or a tenant's module or limits, changed. */
export const ACCESS_CHANGED = topic<AccessChangedEvent>('tokens.access-changed');
/** The reference service stored a write for the tenant. */
export const REFERENCE_CHANGED = topic<ReferenceChangedEvent>('reference.changed');
