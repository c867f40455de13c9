/**
 * Broadcast the reference service publishes after every stored write, so every gateway drops the
 * reference answers it cached for that tenant before the next read.
 */
export const REFERENCE_CHANGED = 'reference.changed';

export interface ReferenceChangedEvent {
  tenant: string;
}
