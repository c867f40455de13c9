/**
 * The job-events consumer: folds each event into its job under compare-and-set, then lets
 * `after` do what the new state needs (dispatch the next phase, clean up). It acks only
 * after both, so a crash in between redelivers the event: the fold then changes nothing
 * and `after` runs again.
 */
import { z } from 'zod';
import { AppError, type Bus, type Logger, type Subscription } from '@supply/kit';
import { foldJobEvent, JOB_EVENTS_QUEUE, type JobEvent } from './fold';
import type { JobRecords } from './records';
import { timestamp, type JobDoc } from './repository';

const rowError = z.object({ row: z.number().int().min(0), field: z.string().max(1024), message: z.string().max(4096) });
const counts = z.object({
  created: z.number().min(0),
  updated: z.number().min(0),
  deleted: z.number().min(0),
  unchanged: z.number().min(0),
  failed: z.number().min(0),
});

const partOutcome = {
  processed: z.number().int().min(0).optional(),
  result: counts.partial().optional(),
  errors: z.array(rowError).max(1000).optional(),
  errors_count: z.number().int().min(0).optional(),
};

/** What other services may send (workflows.proto, JobEvent); sync workers' own events pass as they are. */
const externalEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('started'), job_id: z.number().int(), tenant: z.string(), total: z.number().int().min(0).optional() }),
  z.object({
    type: z.literal('part'),
    job_id: z.number().int(),
    tenant: z.string(),
    part: z.string().min(1).max(200),
    ...partOutcome,
    revision: z.number().int().min(0).max(1_000_000).optional(),
    replaces: z.object(partOutcome).optional(),
  }),
  z.object({
    type: z.literal('finished'),
    job_id: z.number().int(),
    tenant: z.string(),
    status: z.string().optional(),
    message: z.string().max(4096).optional(),
    parts: z.number().int().min(0).max(1_000_000).optional(),
  }),
]);

const SYNC_TYPES = new Set(['chunk_validated', 'chunk_applied', 'chunk_failed', 'scope_deleted']);

export function parseJobEvent(body: unknown): JobEvent {
  const type = (body as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && SYNC_TYPES.has(type)) return body as JobEvent;
  const parsed = externalEvent.safeParse(body);
  // Nothing can make a malformed event valid: after its deliveries it rests in the dead-letter queue.
  if (!parsed.success) throw new AppError('invalid_argument', `Malformed job event: ${parsed.error.issues[0]?.message ?? 'invalid'}.`);
  return parsed.data as JobEvent;
}

export function consumeJobEvents(
  bus: Bus,
  records: JobRecords,
  after: (job: JobDoc) => Promise<void>,
  logger: Logger,
  prefetch = 8,
): Promise<Subscription> {
  return bus.consume<unknown>(
    JOB_EVENTS_QUEUE,
    async (body) => {
      const event = parseJobEvent(body);
      const { job, changed } = await records.update(event.job_id, (current) => foldJobEvent(current, event, timestamp()));
      if (!job) {
        logger.warn({ job: event.job_id, type: event.type }, 'event for an unknown job; dropped');
        return;
      }
      if (changed && job.finished_at && job.status) {
        logger.info({ job: job._id, status: job.status }, 'job finished');
        records.observer?.finished(job);
      }
      await after(job);
    },
    { prefetch },
  );
}
