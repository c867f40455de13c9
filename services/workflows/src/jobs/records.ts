import { NotFoundError, traceRoot, type PrincipalContext } from '@supply/kit';
import { KeyedMutex } from '../keyed-mutex';
import type { JobObserver } from './metrics';
import type { supply_workflows_v1 as pb } from '@supply/contracts';
import { timestamp, ZERO_COUNTS, type JobDoc, type Jobs, type SyncState } from './repository';

/** How many times a write of a job retries after another writer changed the record first. */
const MAX_CAS_ATTEMPTS = 100;

/** The job as the API shows it (proto form; the gateway renders JSON). */
export function jobMessage(job: JobDoc): pb.Job {
  return {
    id: job._id,
    kind: job.kind,
    status: job.status,
    progress: { ...job.progress },
    result: { ...job.result },
    errors: job.errors.map((e) => ({ ...e })),
    errors_count: job.errors_count,
    token_id: job.token_id,
    user_id: job.user_id,
    created_at: job.created_at,
    updated_at: job.updated_at,
    started_at: job.started_at ?? '',
    finished_at: job.finished_at ?? '',
    message: job.message ?? '',
  };
}

/**
 * Job records: creation, reads for their owner, and compare-and-set updates. Writes to one
 * job are serialised within the process, and conditional on the version read, so writers
 * in other processes cannot lose each other's changes.
 */
export class JobRecords {
  private readonly writes = new KeyedMutex();

  constructor(
    readonly jobs: Jobs,
    readonly observer?: JobObserver,
  ) {}

  async create(input: { tenant: string; kind: string; principal: PrincipalContext; total: number; sync?: SyncState }): Promise<JobDoc> {
    const now = timestamp();
    const root = traceRoot();
    const job = await this.jobs.insertOne({
      tenant: input.tenant,
      kind: input.kind,
      status: 'queued',
      token_id: input.principal.tokenId,
      user_id: input.principal.userId,
      progress: { processed: 0, total: input.total },
      result: { ...ZERO_COUNTS },
      errors: [],
      errors_count: 0,
      message: null,
      created_at: now,
      updated_at: now,
      started_at: null,
      finished_at: null,
      version: 0,
      parts: [],
      sync: input.sync ?? null,
      ...(root && { trace_root: root }),
    });
    this.observer?.started(job.kind);
    return job;
  }

  /** The job for a token of the user who created it; anyone else learns nothing, not even that it exists. */
  async forOwner(id: number, tenant: string, principal: PrincipalContext | undefined): Promise<JobDoc> {
    const job = Number.isSafeInteger(id) && id > 0 ? await this.jobs.findById(id) : null;
    if (!job || job.tenant !== tenant || !principal || job.user_id !== principal.userId) throw new NotFoundError(`No job ${id}.`);
    return job;
  }

  /**
   * Applies `change` to the current record and writes it if nothing else wrote in between
   * (else reads and tries again). `change` returns null for "no change".
   */
  update(id: number, change: (job: JobDoc) => JobDoc | null): Promise<{ job: JobDoc | null; changed: boolean }> {
    return this.writes.run(id, () => this.compareAndSet(id, change));
  }

  private async compareAndSet(id: number, change: (job: JobDoc) => JobDoc | null): Promise<{ job: JobDoc | null; changed: boolean }> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.jobs.findById(id);
      if (!current) return { job: null, changed: false };
      const next = change(current);
      if (!next) return { job: current, changed: false };
      const { _id, version: _version, ...fields } = next;
      const written = await this.jobs.updateOne(
        { _id: id, version: current.version },
        { $set: { ...fields, version: current.version + 1 } },
      );
      if (written.matched === 1) return { job: { ...next, version: current.version + 1 }, changed: true };
    }
    throw new Error(`job ${id} kept changing under ${MAX_CAS_ATTEMPTS} write attempts`);
  }
}
