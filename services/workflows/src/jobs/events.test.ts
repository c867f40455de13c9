import { strict as assert } from 'node:assert';
import { supply_workflows_v1 as pb, type ExternalJobEvent } from '@supply/contracts';
import { parseJobEvent } from './events';

/** An event of each type with every field of the proto JobEvent that type carries. */
const FULL: ExternalJobEvent[] = [
  { type: 'started', job_id: 3, tenant: 'demo', total: 12 },
  {
    type: 'part',
    job_id: 3,
    tenant: 'demo',
    part: 'chunk-0',
    processed: 6,
    result: { created: 2, updated: 1, deleted: 1, unchanged: 1, failed: 1 },
    errors: [{ row: 4, field: 'quantity', message: 'The quantity field must be a number.' }],
    errors_count: 1,
  },
  {
    type: 'part',
    job_id: 3,
    tenant: 'demo',
    part: 'chunk-1',
    processed: 6,
    result: { created: 6 },
    revision: 2,
    replaces: { processed: 6, result: { failed: 6 }, errors: [{ row: 6, field: 'chunk', message: 'failed' }], errors_count: 1 },
  },
  { type: 'finished', job_id: 3, tenant: 'demo', status: 'partially_succeeded', message: 'Planned 11 of 12.', parts: 2 },
];

describe('job events: the bus message check against workflows.proto', () => {
  it('keeps every field of every event type (the schema strips what it does not know)', () => {
    for (const event of FULL) assert.deepEqual(parseJobEvent(event), event);
  });

  it('covers every field of the proto JobEvent', () => {
    const kept = new Set(FULL.flatMap((e) => Object.keys(parseJobEvent(e))));
    for (const field of Object.keys(pb.JobEvent.fromPartial({}))) assert.ok(kept.has(field), `JobEvent.${field}`);
  });

  it('refuses an event of an unknown type or with a field of the wrong type', () => {
    assert.throws(() => parseJobEvent({ type: 'paused', job_id: 3, tenant: 'demo' }), /Malformed job event/);
    assert.throws(() => parseJobEvent({ type: 'part', job_id: 3, tenant: 'demo', part: 'p', processed: 'six' }), /Malformed job event/);
  });
});
