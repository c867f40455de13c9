import assert from 'node:assert/strict';
import type { Collection, CollectionSpec, Doc, DocId, Filter, Sort, Store, Update, UpdateResult } from '../store/store.js';
import type { Bus, Delivery } from './bus.js';
import { MESSAGES_COLLECTION, openEmbeddedBus, type MessageDoc } from './embedded.js';

/** Just the Store subset the embedded bus uses, in memory, with Mongo meaning. */
class FakeCollection<T extends Doc> {
  readonly docs = new Map<DocId, T>();
  private seq = 0;
  constructor(readonly name: string) {}

  async insertOne(doc: Omit<T, '_id'> & { _id?: DocId }): Promise<T> {
    const full = { ...doc, _id: doc._id ?? ++this.seq } as T;
    this.docs.set(full._id, structuredClone(full));
    return full;
  }
  /** Synchronous, so each read-modify-write below is atomic as the port requires. */
  private select(filter: Filter, options: { sort?: Sort; limit?: number } = {}): T[] {
    const hits = [...this.docs.values()].filter((d) => matches(d, filter));
    if (options.sort) hits.sort(comparator(options.sort));
    return hits.slice(0, options.limit ?? Infinity);
  }
  async find(filter: Filter, options: { sort?: Sort; limit?: number } = {}): Promise<T[]> {
    return this.select(filter, options).map((d) => structuredClone(d));
  }
  async findOne(filter: Filter, options: { sort?: Sort } = {}): Promise<T | null> {
    return (await this.find(filter, { ...options, limit: 1 }))[0] ?? null;
  }
  async count(filter: Filter): Promise<number> {
    return this.select(filter).length;
  }
  async findOneAndUpdate(filter: Filter, update: Update, options: { sort?: Sort } = {}): Promise<T | null> {
    const [hit] = this.select(filter, { ...options, limit: 1 });
    if (!hit) return null;
    const next = apply(hit, update);
    this.docs.set(hit._id, next);
    return structuredClone(next);
  }
  async updateOne(filter: Filter, update: Update): Promise<UpdateResult> {
    const [hit] = this.select(filter, { limit: 1 });
    if (!hit) return { matched: 0, modified: 0 };
    this.docs.set(hit._id, apply(hit, update));
    return { matched: 1, modified: 1 };
  }
  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const hits = this.select(filter);
    for (const hit of hits) this.docs.set(hit._id, apply(hit, update));
    return { matched: hits.length, modified: hits.length };
  }
  async deleteOne(filter: Filter): Promise<number> {
    const [hit] = this.select(filter, { limit: 1 });
    return hit && this.docs.delete(hit._id) ? 1 : 0;
  }
}

function matches(doc: Doc, filter: Filter): boolean {
  return Object.entries(filter).every(([field, cond]) => {
    const value = doc[field];
    if (cond === null || typeof cond !== 'object') return value === cond;
    return Object.entries(cond as Record<string, unknown>).every(([op, arg]) => {
      switch (op) {
        case '$lte':
          return (value as number) <= (arg as number);
        case '$nin':
          return !(arg as unknown[]).includes(value);
        default:
          throw new Error(`fake store: unsupported operator ${op}`);
      }
    });
  });
}

function comparator(sort: Sort): (a: Doc, b: Doc) => number {
  return (a, b) => {
    for (const [field, dir] of sort) {
      const x = a[field] as number;
      const y = b[field] as number;
      if (x !== y) return (x < y ? -1 : 1) * dir;
    }
    return 0;
  };
}

function apply<T extends Doc>(doc: T, update: Update): T {
  const next: Record<string, unknown> = structuredClone(doc);
  for (const [op, fields] of Object.entries(update)) {
    for (const [field, value] of Object.entries(fields)) {
      if (op === '$set') next[field] = structuredClone(value);
      else if (op === '$inc') next[field] = ((next[field] as number) ?? 0) + (value as number);
      else throw new Error(`fake store: unsupported update ${op}`);
    }
  }
  return next as T;
}

class FakeStore {
  readonly collections = new Map<string, FakeCollection<Doc>>();
  async collection<T extends Doc>(spec: CollectionSpec): Promise<Collection<T>> {
    if (!this.collections.has(spec.name)) this.collections.set(spec.name, new FakeCollection(spec.name));
    return this.collections.get(spec.name) as unknown as Collection<T>;
  }
  async ping(): Promise<void> {}
  messages(): MessageDoc[] {
    return [...(this.collections.get(MESSAGES_COLLECTION)?.docs.values() ?? [])] as MessageDoc[];
  }
  asStore(): Store {
    return this as unknown as Store;
  }
}

function until(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (predicate()) resolve();
      else if (Date.now() > deadline) reject(new Error('condition not met in time'));
      else setTimeout(tick, 5);
    };
    tick();
  });
}

const fast = { redeliveryDelayMs: 10, pollIntervalMs: 50, drainTimeoutMs: 200 };

describe('embedded bus (in-memory store fake)', () => {
  let store: FakeStore;
  let bus: Bus;
  beforeEach(async () => {
    store = new FakeStore();
    bus = await openEmbeddedBus({ store: store.asStore(), namespace: 'unit', maxDeliveries: 3, ...fast });
  });
  afterEach(() => bus.close());

  it('stores the message before send resolves', async () => {
    await bus.send('jobs', { n: 1 }, { messageId: 'm-1' });
    const [doc] = store.messages();
    assert.equal(doc?.queue, 'unit.jobs');
    assert.equal(doc?.messageId, 'm-1');
    assert.equal(doc?.state, 'ready');
    assert.deepEqual(JSON.parse(doc!.payload), { n: 1 });
  });

  it('acks by deleting after the handler resolves, not before', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    await bus.send('jobs', 'x');
    await bus.consume('jobs', async () => {
      started = true;
      await gate;
    });
    await until(() => started);
    assert.equal(store.messages()[0]?.state, 'inflight');
    release();
    await until(() => store.messages().length === 0);
  });

  it('redelivers with backoff and dead-letters after maxDeliveries', async () => {
    const seen: Delivery[] = [];
    const times: number[] = [];
    await bus.send('jobs', 'poison', { messageId: 'p' });
    await bus.consume('jobs', async (_body, delivery) => {
      seen.push(delivery);
      times.push(Date.now());
      throw new Error('boom');
    });
    await until(() => store.messages().some((m) => m.queue === 'unit.jobs.dead'));
    assert.deepEqual(seen.map((d) => d.deliveryCount), [1, 2, 3]);
    assert.ok(seen.every((d) => d.messageId === 'p'));
    assert.ok(times[2]! - times[1]! >= times[1]! - times[0]!, 'backoff grows');
    const dead = await bus.deadLetters('jobs');
    assert.deepEqual(dead, [{ messageId: 'p', body: 'poison' }]);
  });

  it('a new bus redelivers messages a dead process left in flight, counting that delivery', async () => {
    await bus.send('jobs', 'a', { messageId: 'a' });
    const docs = store.collections.get(MESSAGES_COLLECTION)!.docs;
    const [id, doc] = [...docs.entries()][0]!;
    docs.set(id, { ...doc, state: 'inflight', claim: 'gone', owner: 'crashed-process', deliveryCount: 1 });
    const next = await openEmbeddedBus({ store: store.asStore(), namespace: 'unit', maxDeliveries: 3, ...fast });
    try {
      const got: Delivery[] = [];
      await next.consume('jobs', async (_body, delivery) => {
        got.push(delivery);
      });
      await until(() => got.length === 1 && store.messages().length === 0);
      assert.deepEqual(got, [{ messageId: 'a', deliveryCount: 2 }]);
    } finally {
      await next.close();
    }
  });

  it('does not steal messages held by another live bus on the same store', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    await bus.send('jobs', 'a');
    await bus.consume('jobs', async () => {
      calls++;
      await gate;
    });
    await until(() => calls === 1);
    const other = await openEmbeddedBus({ store: store.asStore(), namespace: 'unit', ...fast });
    try {
      assert.equal(store.messages()[0]?.state, 'inflight');
    } finally {
      release();
      await other.close();
    }
  });

  it('dead-letters an orphan whose crashed delivery was the last allowed one', async () => {
    await bus.send('jobs', 'a', { messageId: 'a' });
    const docs = store.collections.get(MESSAGES_COLLECTION)!.docs;
    const [id, doc] = [...docs.entries()][0]!;
    docs.set(id, { ...doc, state: 'inflight', claim: 'gone', owner: 'crashed-process', deliveryCount: 3 });
    const next = await openEmbeddedBus({ store: store.asStore(), namespace: 'unit', maxDeliveries: 3, ...fast });
    try {
      let calls = 0;
      await next.consume('jobs', async () => {
        calls++;
      });
      await until(() => store.messages()[0]?.queue === 'unit.jobs.dead');
      assert.equal(calls, 0);
      assert.deepEqual(await next.deadLetters('jobs'), [{ messageId: 'a', body: 'a' }]);
    } finally {
      await next.close();
    }
  });

  it('close hands back messages whose handlers outlive the drain timeout', async () => {
    await bus.send('jobs', 'stuck');
    let started = false;
    await bus.consume('jobs', async () => {
      started = true;
      await new Promise(() => undefined);
    });
    await until(() => started);
    await bus.close();
    const [doc] = store.messages();
    assert.equal(doc?.state, 'ready');
    assert.equal(doc?.claim, null);
    assert.equal(doc?.deliveryCount, 1);
  });

  it('rejects bad names and options', async () => {
    await assert.rejects(bus.send('bad name', 1), { code: 'invalid_argument' });
    await assert.rejects(bus.consume('jobs', async () => undefined, { prefetch: 0 }), { code: 'invalid_argument' });
    await assert.rejects(openEmbeddedBus({ store: store.asStore(), maxDeliveries: 0 }), { code: 'invalid_argument' });
    await assert.rejects(bus.deadLetters('jobs', -1), { code: 'invalid_argument' });
  });

  it('refuses work after close', async () => {
    await bus.close();
    await assert.rejects(bus.send('jobs', 1), { code: 'unavailable' });
  });
});
