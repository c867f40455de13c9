/**
 * Trace spans for store operations, added once at the port so every adapter gets them.
 * Attributes name the database, collection and operation only, never a filter or a
 * document. While tracing is off each call costs one boolean check and allocates nothing.
 */
import { storeSpan, storeSpanIterable, tracingEnabled } from '../tracing/tracing.js';
import type { Collection, Doc, Store } from './store.js';

type Operation = Exclude<keyof Collection, 'name' | 'iterate'>;
const OPERATIONS: readonly Operation[] = [
  'insertOne',
  'insertMany',
  'findById',
  'findOne',
  'find',
  'count',
  'updateOne',
  'findOneAndUpdate',
  'updateMany',
  'bulkUpsert',
  'deleteOne',
  'deleteMany',
];

export function tracedStore(store: Store, database: string, system: 'lmdb' | 'mongodb'): Store {
  return {
    async collection<T extends Doc = Doc>(spec: Parameters<Store['collection']>[0]): Promise<Collection<T>> {
      return tracedCollection(await store.collection<T>(spec), database, system);
    },
    allocateIds: (sequence, count) => store.allocateIds(sequence, count),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

function tracedCollection<T extends Doc>(inner: Collection<T>, database: string, system: 'lmdb' | 'mongodb'): Collection<T> {
  const out = { name: inner.name } as Record<string, unknown>;
  for (const op of OPERATIONS) {
    const call = (inner[op] as (...args: unknown[]) => Promise<unknown>).bind(inner);
    out[op] = (...args: unknown[]) => (tracingEnabled() ? storeSpan(system, database, inner.name, op, () => call(...args)) : call(...args));
  }
  out.iterate = (filter: Parameters<Collection<T>['iterate']>[0], options?: Parameters<Collection<T>['iterate']>[1]) =>
    tracingEnabled()
      ? storeSpanIterable(system, database, inner.name, 'iterate', () => inner.iterate(filter, options))
      : inner.iterate(filter, options);
  return out as unknown as Collection<T>;
}
