import { strict as assert } from 'node:assert';
import { supply_workflows_v1 as pb } from './gen/index';
import type { ExternalJobEvent } from './jobs';

/** One event of each type with every field it may carry (non-zero, so JSON keeps them all). */
const SAMPLE_JOB_EVENTS: ExternalJobEvent[] = [
  { type: 'started', job_id: 7, tenant: 'demo', total: 40 },
  {
    type: 'part',
    job_id: 7,
    tenant: 'demo',
    part: 'chunk-3',
    processed: 10,
    result: { created: 4, updated: 3, deleted: 1, unchanged: 1, failed: 1 },
    errors: [{ row: 12, field: 'quantity', message: 'The quantity field must be at least 0.' }],
    errors_count: 2,
  },
  {
    type: 'part',
    job_id: 7,
    tenant: 'demo',
    part: 'chunk-4',
    processed: 10,
    result: { created: 10, updated: 0, deleted: 0, unchanged: 0, failed: 0 },
    revision: 1,
    replaces: {
      processed: 10,
      result: { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 10 },
      errors: [{ row: 40, field: 'chunk', message: 'failed' }],
      errors_count: 1,
    },
  },
  { type: 'finished', job_id: 7, tenant: 'demo', status: 'partially_succeeded', message: 'done', parts: 4 },
];

describe('job events: the TypeScript type against workflows.proto', () => {
  it('every field an event carries is a field of the proto JobEvent, of the same type (through the wire format and back)', () => {
    for (const event of SAMPLE_JOB_EVENTS) {
      const decoded = pb.JobEvent.decode(pb.JobEvent.encode(pb.JobEvent.fromPartial(event)).finish()) as unknown as Record<string, unknown>;
      for (const [field, value] of Object.entries(event)) assert.deepEqual(decoded[field], value, `${event.type}.${field}`);
    }
  });

  it('every field of the proto JobEvent is one some event type carries', () => {
    const carried = new Set(SAMPLE_JOB_EVENTS.flatMap((e) => Object.keys(e)));
    for (const field of Object.keys(pb.JobEvent.fromPartial({}))) assert.ok(carried.has(field), `JobEvent.${field} is in no event type`);
  });
});
