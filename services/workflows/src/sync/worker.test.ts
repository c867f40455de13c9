import assert from 'node:assert/strict';
import { AppError, createLogger, deliveryWithVerdict, Metrics, resolveRetryPolicy, type Bus, type Clients } from '@supply/kit';
import type { JobDoc, Jobs } from '../jobs/repository';
import type { ChunkProcessor } from './chunks';
import type { Staging } from './staging';
import { ChunkWorker } from './worker';

describe('sync chunk worker', () => {
  it('counts a failed chunk the bus runs again as a retried part of its job kind, and not one it dead-letters', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const job = { _id: 3, tenant: 'demo', kind: 'sales_sync', sync: { phase: 'validating', upload: 'u' } } as unknown as JobDoc;
    let failure: unknown;
    const jobs = { findById: async () => job } as unknown as Jobs;
    const staging = {
      chunks: { findById: async () => Promise.reject(failure) },
      // The part ledger: nothing recorded, and recording a failure fails too (the sweep would report it).
      parts: { findById: async () => null, insertOne: async () => Promise.reject(failure) },
    } as unknown as Staging;
    const worker = new ChunkWorker(jobs, staging, {} as ChunkProcessor, {} as Clients, {} as Bus, createLogger('silent'), metrics);
    const retried = async () => (await metrics.jobPartsRetried.get()).values.map((v) => [v.labels.kind, v.value]).sort();
    assert.deepEqual(
      await retried(),
      [
        ['inventory_sync', 0],
        ['sales_sync', 0],
      ],
      'every sync kind shows from the start',
    );

    const policy = resolveRetryPolicy({ maxDeliveries: 2 });
    const delivery = (deliveryCount: number) =>
      deliveryWithVerdict({ messageId: 'm', deliveryCount }, { deliveryCount, retries: 0, firstFailureAt: null }, policy);
    const message = { job_id: 3, tenant: 'demo', step: 'validate' as const, seq: 0 };
    failure = new AppError('unavailable', 'The store is unavailable.');
    await assert.rejects(worker.handle(message, delivery(2)));
    failure = new Error('bad');
    await assert.rejects(worker.handle(message, delivery(1)));
    // The last allowed delivery of a permanent failure is dead-lettered, not retried.
    await assert.rejects(worker.handle(message, delivery(2)));
    assert.deepEqual(await retried(), [
      ['inventory_sync', 0],
      ['sales_sync', 2],
    ]);
  });
});
