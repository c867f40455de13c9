/**
 * The job engine's part step, one for every kind of job: a sync's chunks, a forecast run's
 * chunks of series, a plan run's chunks of item-locations. A part is one unit of a job's work,
 * carried by one work-queue message; its owner keeps the job's parts in its own store.
 *
 * Delivery is at least once. A part's outcome is recorded once, in the owner's store, before
 * it is reported, so every later delivery reports that first outcome again (what the store
 * holds), never a second count. A failure is treated as the bus rules (see decideOnFailure):
 * one worth retrying is thrown back and retried with backoff through the outage window; one
 * the bus will dead-letter (permanent, or the window has passed) records the part failed with
 * a reason fit for a client, reports it, and goes on to `<queue>.dead`. An operator who
 * replays a dead letter (`npm run ops -- dead-letters replay`) runs the part again under the
 * next revision: its new outcome replaces the failed one, and the report names what it
 * replaces so the job can take the old counts back.
 */
import { ConflictError } from '../errors';
import { failureReason } from '../failures';
import type { Logger } from '../log';
import type { Metrics } from '../metrics/metrics';
import type { Delivery, MessageEnvelope } from '../bus/bus';
import { replayOf } from '../bus/common';
import type { Collection, CollectionSpec, Doc } from '../store/store';
import type { ExternalJobEvent, PartOutcome } from '@supply/contracts';

export type PartState = 'done' | 'failed';

export interface PartRecord<O> extends Doc {
  /** `<job>:<part>` */
  _id: string;
  job: string;
  part: string;
  state: PartState;
  /** What the part did (a failed part: what its failure means, e.g. every row failed). */
  outcome: O;
  /** Why a failed part failed, fit for a client; null when done. */
  reason: string | null;
  /** 0 for the part's own run; n after the n-th replay of its dead letter. */
  revision: number;
  /** The outcome a replay replaced (null on revision 0), so the job can take its counts back. */
  replaced: O | null;
  recorded_at: number;
}

/** The collection a part ledger keeps its records in (each owner names its own). */
export function partCollection(name: string): CollectionSpec {
  return { name, indexes: [{ name: 'job', keys: [['job', 1]] }] };
}

/** A part to settle: what running it means, what giving up on it means, and how it is told. */
export interface PartTask<O> {
  /** The job's id in the owner's store (a run id, a job id). */
  job: string | number;
  /** The part's name within its job, e.g. `chunk-3`. */
  part: string;
  /** The job kind, for the metrics. */
  kind: string;
  /** Does the part. Idempotent: it may run again after a crash, and says what the store holds. */
  run(): Promise<O>;
  /** The part's outcome when the bus gives up on it (called once, with a reason fit for a client). */
  failed(err: unknown, reason: string): Promise<O>;
  /** Tells the job the recorded outcome; sent again on every later delivery, so it must be idempotent downstream. */
  report(record: PartRecord<O>): Promise<void>;
  /** Runs after every report (a part's outcome recorded, failed or done): where the owner finishes its job once every part is recorded. */
  recorded?(record: PartRecord<O>): Promise<void>;
}

/** The contract's `part` event for a recorded part; a replayed part's event says what it replaces. */
export function partEvent<O>(
  record: PartRecord<O>,
  job: { job_id: number; tenant: string },
  outcome: (o: O) => PartOutcome,
): ExternalJobEvent {
  return {
    type: 'part',
    job_id: job.job_id,
    tenant: job.tenant,
    part: record.part,
    ...outcome(record.outcome),
    ...replayFields(record, outcome),
  };
}

/** What a report of a replayed part adds (nothing for revision 0): its revision and the outcome it replaces, as `outcome` maps it. */
export function replayFields<O, R>(record: PartRecord<O>, outcome: (o: O) => R): { revision?: number; replaces?: R } {
  if (record.revision === 0) return {};
  return { revision: record.revision, ...(record.replaced !== null && { replaces: outcome(record.replaced) }) };
}

/** The message id a part's report travels under (one per revision, so a replay's report is not taken for a duplicate). */
export function partReportId(record: PartRecord<unknown>): string {
  return `part:${record._id}:${record.revision}`;
}

export function partId(job: string | number, part: string): string {
  return `${job}:${part}`;
}

export class PartLedger<O> {
  constructor(
    readonly records: Collection<PartRecord<O>>,
    private readonly deps: { logger: Logger; metrics?: Metrics },
  ) {}

  find(job: string | number, part: string): Promise<PartRecord<O> | null> {
    return this.records.findById(partId(job, part));
  }

  /** Parts of the job recorded so far (done or failed). */
  settled(job: string | number): Promise<number> {
    return this.records.count({ job: String(job) });
  }

  /** Every recorded part of the job, in part-name order. */
  list(job: string | number): Promise<Array<PartRecord<O>>> {
    return this.records.find({ job: String(job) }, { sort: [['_id', 1]] });
  }

  /**
   * Runs the part unless it is recorded already, records its outcome once, and reports the
   * recorded outcome. Throws what the bus should retry or dead-letter; a part the bus gives up
   * on is recorded failed and reported before the error goes back to the bus.
   */
  async settle(task: PartTask<O>, delivery: Delivery, envelope?: MessageEnvelope): Promise<PartRecord<O>> {
    const revision = replayOf(envelope);
    const earlier = await this.find(task.job, task.part);
    // Recorded by an earlier delivery: report what it recorded. A replay runs a failed part again.
    if (earlier && (earlier.state === 'done' || earlier.revision >= revision)) {
      await task.report(earlier);
      await task.recorded?.(earlier);
      return earlier;
    }
    let record: PartRecord<O>;
    try {
      record = await this.keep(task, earlier, revision, 'done', await task.run(), null);
    } catch (err) {
      if (!delivery.willDeadLetter?.(err)) {
        this.deps.metrics?.partFailed(task.kind, delivery, err);
        throw err;
      }
      await this.giveUp(task, earlier, revision, err);
      throw err;
    }
    await task.report(record);
    await task.recorded?.(record);
    return record;
  }

  /**
   * The part's message is, or is going, to the dead-letter queue without a handler's verdict
   * (its last delivery died with its worker): reports the part's record if it has one, else
   * records it failed now.
   */
  async giveUpOn(task: PartTask<O>, err: unknown): Promise<void> {
    const earlier = await this.find(task.job, task.part);
    if (!earlier) return this.giveUp(task, null, 0, err);
    await task.report(earlier);
    await task.recorded?.(earlier);
  }

  /** The bus is dead-lettering the part: record it failed, with the reason, and tell the job. */
  private async giveUp(task: PartTask<O>, earlier: PartRecord<O> | null, revision: number, err: unknown): Promise<void> {
    const reason = failureReason(err);
    this.deps.logger.error({ err, job: task.job, part: task.part, revision }, 'job part failed for good; it goes to the dead-letter queue');
    try {
      const record = await this.keep(task, earlier, revision, 'failed', await task.failed(err, reason), reason);
      await task.report(record);
      await task.recorded?.(record);
    } catch (recordErr) {
      // The store or the bus is down too: the owner's sweep reports the dead letter later.
      this.deps.logger.error({ err: recordErr, job: task.job, part: task.part }, 'recording a failed job part failed');
    }
  }

  /** Records an outcome once per revision: a concurrent delivery that recorded first wins, and its record is the answer. */
  private async keep(
    task: PartTask<O>,
    earlier: PartRecord<O> | null,
    revision: number,
    state: PartState,
    outcome: O,
    reason: string | null,
  ): Promise<PartRecord<O>> {
    const _id = partId(task.job, task.part);
    const fields = { state, outcome, reason, revision, recorded_at: Date.now() };
    if (!earlier) {
      try {
        return await this.records.insertOne({ _id, job: String(task.job), part: task.part, replaced: null, ...fields });
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        return (await this.records.findById(_id))!;
      }
    }
    await this.records.updateOne({ _id, revision: earlier.revision }, { $set: { ...fields, replaced: earlier.outcome } });
    return (await this.records.findById(_id))!;
  }
}
