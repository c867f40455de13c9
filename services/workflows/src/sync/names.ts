/**
 * Names a load has resolved. Within one load a name means what it meant when the load
 * first asked, so later chunks (and redelivered ones) ask the reference service only
 * about names it has not seen: a million rows over a few hundred items cost a few
 * hundred lookups, not one per chunk.
 */
import type { CallOverrides, Clients } from '@supply/kit';
import { nameKey } from './rows';

export const NAME_KINDS = ['items', 'customer_groups', 'sale_types', 'timing_intervals', 'uoms', 'locations'] as const;
export type NameKind = (typeof NAME_KINDS)[number];

export interface NamedRef {
  id: number;
  name: string;
  abbreviation: string;
}

const LOOKUP_FIELD: Record<
  NameKind,
  'item_ids' | 'customer_group_ids' | 'sale_type_ids' | 'timing_interval_ids' | 'uom_ids' | 'location_ids'
> = {
  items: 'item_ids',
  customer_groups: 'customer_group_ids',
  sale_types: 'sale_type_ids',
  timing_intervals: 'timing_interval_ids',
  uoms: 'uom_ids',
  locations: 'location_ids',
};

const pairKey = (item: number, group: number) => `${item}:${group}`;

export class LoadNames {
  private readonly ids = new Map<string, number>();
  private readonly records = new Map<string, NamedRef>();
  private readonly combos = new Map<string, number>();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly clients: Clients) {}

  /** Resolves the names not seen yet (ids, then display names), in one call of each kind at most. */
  async resolve(asked: Partial<Record<NameKind, string[]>>, call: CallOverrides): Promise<void> {
    const missing = Object.fromEntries(NAME_KINDS.map((kind) => [kind, [] as string[]])) as Record<NameKind, string[]>;
    const waits = new Set<Promise<void>>();
    const keys: string[] = [];
    for (const kind of NAME_KINDS) {
      for (const name of new Set(asked[kind] ?? [])) {
        const key = `${kind}:${nameKey(name)}`;
        if (this.ids.has(key)) continue;
        // Another chunk of the load is asking already: wait for its answer.
        const asking = this.pending.get(key);
        if (asking) waits.add(asking);
        else if (!keys.includes(key)) {
          keys.push(key);
          missing[kind].push(name);
        }
      }
    }
    if (keys.length > 0) {
      const work = this.fetch(missing, call);
      for (const key of keys) this.pending.set(key, work);
      void work
        .finally(() => {
          for (const key of keys) if (this.pending.get(key) === work) this.pending.delete(key);
        })
        .catch(() => undefined);
      waits.add(work);
    }
    await Promise.all(waits);
  }

  private async fetch(missing: Record<NameKind, string[]>, call: CallOverrides): Promise<void> {
    const resolved = await this.clients.reference.resolveNames(missing, call);
    const lookup = {
      item_ids: [] as number[],
      customer_group_ids: [] as number[],
      sale_type_ids: [] as number[],
      timing_interval_ids: [] as number[],
      uom_ids: [] as number[],
      location_ids: [] as number[],
    };
    const learnt: Array<[string, number]> = [];
    for (const kind of NAME_KINDS) {
      missing[kind].forEach((name, i) => {
        const id = resolved[kind]?.ids[i] ?? 0;
        learnt.push([`${kind}:${nameKey(name)}`, id]);
        if (id > 0 && !this.records.has(`${kind}:${id}`)) lookup[LOOKUP_FIELD[kind]].push(id);
      });
    }
    if (Object.values(lookup).some((ids) => ids.length > 0)) {
      const named = await this.clients.reference.lookupIds({ ...lookup, include_hierarchy: false }, call);
      for (const kind of NAME_KINDS) {
        for (const r of named[kind]) this.records.set(`${kind}:${r.id}`, { id: r.id, name: r.name, abbreviation: r.abbreviation });
      }
    }
    for (const [key, id] of learnt) this.ids.set(key, id);
  }

  /** The id a name resolved to, or 0 when it names nothing. */
  id(kind: NameKind, name: string): number {
    return this.ids.get(`${kind}:${nameKey(name)}`) ?? 0;
  }

  record(kind: NameKind, id: number): NamedRef {
    const found = this.records.get(`${kind}:${id}`);
    if (!found) throw new Error(`no display name for ${kind} ${id}`);
    return found;
  }

  /** Item-customer-group combination ids of these pairs (0 where none exists yet). */
  async combinations(
    pairs: Array<{ item_id: number; customer_group_id: number }>,
    call: CallOverrides,
  ): Promise<(pair: { item_id: number; customer_group_id: number }) => number> {
    const unknown = [
      ...new Map(
        pairs
          .filter((p) => !this.combos.has(pairKey(p.item_id, p.customer_group_id)))
          .map((p) => [pairKey(p.item_id, p.customer_group_id), p]),
      ).values(),
    ];
    if (unknown.length > 0) {
      const found = await this.clients.reference.getItemCustomerGroups({ ids: [], keys: unknown }, call);
      // Only existing ones are kept: a missing one may be created by another chunk of the load.
      for (const r of found.records) this.combos.set(pairKey(r.item_id, r.customer_group_id), r.id);
    }
    return (pair) => this.combos.get(pairKey(pair.item_id, pair.customer_group_id)) ?? 0;
  }
}

/** The names of the loads a process worked on lately (a bounded number of them). */
export class LoadNameCache {
  private readonly loads = new Map<string, LoadNames>();

  constructor(
    private readonly clients: Clients,
    private readonly capacity = 32,
  ) {}

  of(loadId: string): LoadNames {
    let names = this.loads.get(loadId);
    if (names) {
      this.loads.delete(loadId);
    } else {
      names = new LoadNames(this.clients);
      if (this.loads.size >= this.capacity) this.loads.delete(this.loads.keys().next().value!);
    }
    this.loads.set(loadId, names);
    return names;
  }
}
