/**
 * A reference service over a fixed table, for unit tests of name resolution: it answers
 * the three calls LoadNames makes (resolveNames, lookupIds, getItemCustomerGroups) the way
 * the reference service does (names, or a uom's abbreviation, exactly but ignoring case;
 * 0 for unknown ones) and
 * records each call, so a test can tell how often the service was asked.
 */
import type { Clients } from '@supply/kit';
import type { NameKind } from './names';

export interface TableRecord {
  id: number;
  name: string;
  abbreviation?: string;
}

export type ReferenceTable = Partial<Record<NameKind, TableRecord[]>> & {
  combinations?: Array<{ id: number; item_id: number; customer_group_id: number }>;
};

export interface ReferenceCall {
  method: 'resolveNames' | 'lookupIds' | 'getItemCustomerGroups';
  request: unknown;
}

const KINDS: NameKind[] = ['items', 'customer_groups', 'sale_types', 'timing_intervals', 'uoms', 'locations'];
const ID_FIELD = {
  items: 'item_ids',
  customer_groups: 'customer_group_ids',
  sale_types: 'sale_type_ids',
  timing_intervals: 'timing_interval_ids',
  uoms: 'uom_ids',
  locations: 'location_ids',
} as const;

export function referenceTable(table: ReferenceTable): {
  clients: Clients;
  calls: ReferenceCall[];
  answering: { hold: Promise<void> | null };
} {
  const calls: ReferenceCall[] = [];
  const answering: { hold: Promise<void> | null } = { hold: null };
  const records = (kind: NameKind) => table[kind] ?? [];
  const reference = {
    async resolveNames(request: Record<NameKind, string[]>) {
      calls.push({ method: 'resolveNames', request: structuredClone(request) });
      if (answering.hold) await answering.hold;
      return Object.fromEntries(
        KINDS.map((kind) => {
          const ids = (request[kind] ?? []).map(
            (name) => records(kind).find((r) => [r.name, r.abbreviation].some((n) => n?.toLowerCase() === name.toLowerCase()))?.id ?? 0,
          );
          return [kind, { ids, unknown: (request[kind] ?? []).filter((_, i) => ids[i] === 0) }];
        }),
      );
    },
    async lookupIds(request: Record<string, number[]>) {
      calls.push({ method: 'lookupIds', request: structuredClone(request) });
      return Object.fromEntries(
        KINDS.map((kind) => [
          kind,
          records(kind)
            .filter((r) => request[ID_FIELD[kind]]!.includes(r.id))
            .map((r) => ({ id: r.id, name: r.name, hierarchy: [], abbreviation: r.abbreviation ?? '', uom_id: 0 })),
        ]),
      );
    },
    async getItemCustomerGroups(request: { keys: Array<{ item_id: number; customer_group_id: number }> }) {
      calls.push({ method: 'getItemCustomerGroups', request: structuredClone(request) });
      const found = (table.combinations ?? []).filter((c) =>
        request.keys.some((k) => k.item_id === c.item_id && k.customer_group_id === c.customer_group_id),
      );
      return { records: found };
    },
  };
  return { clients: { reference } as unknown as Clients, calls, answering };
}
