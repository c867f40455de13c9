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

/**
 * The witness protocol (kit `witnessedPublisher` / `subscribeWitnessed`): a publisher of the
 * broadcasts above answers a change only once every live subscriber has acknowledged it.
 */
export interface WitnessMember {
  /** One subscription's id (a process may hold several). */
  member: string;
  /** `here` on subscribing, on every heartbeat and in answer to a roll call; `leaving` on close. */
  kind: 'here' | 'leaving';
  /** The topics this member acknowledges. */
  topics: string[];
}

export interface WitnessAck {
  /** The `witness` id the broadcast carried. */
  witness: string;
  member: string;
}

/** Subscribers announce themselves to publishers. */
export const WITNESS_MEMBERS = topic<WitnessMember>('witness.members');
/** A publisher that starts asks every subscriber to announce itself at once. */
export const WITNESS_ROLL_CALL = topic<Record<string, never>>('witness.roll-call');
/** A subscriber has applied a witnessed broadcast. */
export const WITNESS_ACKS = topic<WitnessAck>('witness.acks');
