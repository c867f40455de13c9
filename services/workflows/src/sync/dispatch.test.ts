import assert from 'node:assert/strict';
import type { Bus, Logger, SendOptions } from '@supply/kit';
import type { JobRecords } from '../jobs/records';
import type { JobDoc } from '../jobs/repository';
import { Dispatcher } from './dispatch';
import type { ScopeLocks } from './scope-locks';
import type { Staging } from './staging';

describe('sync dispatcher', () => {
  it("sends a phase's chunks with the job's root span, even with no request around (the sweeper)", async () => {
    const sent: Array<SendOptions | undefined> = [];
    const bus = { send: async (_q: string, _b: unknown, options?: SendOptions) => void sent.push(options) } as unknown as Bus;
    const records = { update: async () => ({ job: null, changed: false }) } as unknown as JobRecords;
    const logger = { debug: () => undefined } as unknown as Logger;
    const dispatcher = new Dispatcher(bus, records, {} as Staging, {} as ScopeLocks, logger);
    const root = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    const job = { _id: 7, tenant: 'demo', sync: { phase: 'validating', dispatched: null, chunks: 2 } } as unknown as JobDoc;
    await dispatcher.act({ ...job, trace_root: root });
    assert.deepEqual(sent, [
      { messageId: '7:validate:0', headers: { 'supply-trace-root': root } },
      { messageId: '7:validate:1', headers: { 'supply-trace-root': root } },
    ]);
    // A job created while tracing was off sends no such header.
    await dispatcher.act(job);
    assert.deepEqual(sent.slice(2), [{ messageId: '7:validate:0' }, { messageId: '7:validate:1' }]);
  });
});
