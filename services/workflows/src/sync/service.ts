/**
 * Accepting a load: a JSON body or a file stream is checked, staged chunk by chunk and
 * either dry-run (answered at once, nothing kept) or committed as a job whose first
 * phase goes on the bus. The answer is stored under the request's Idempotency-Key.
 */
import { createHash } from 'node:crypto';
import { AppError, settleWithin, ValidationError, type CallContext, type Clients, type Logger, type PrincipalContext } from '@supply/kit';
import { supply_workflows_v1 as pb } from '@supply/contracts';
import { mergeErrors } from '../jobs/fold';
import { jobMessage, type JobRecords } from '../jobs/records';
import type { JobDoc, SyncState } from '../jobs/repository';
import { IdempotencyKeys, keyOwnerOf, type Claim, type HeldClaim, type RecoverAbandoned } from '../idempotency/keys';
import { KeyedMutex } from '../keyed-mutex';
import { ChunkProcessor, planCounts, type LoadContext } from './chunks';
import { columnsFor, CsvRecords, fileError } from './csv';
import type { Dispatcher } from './dispatch';
import { markDuplicates } from './duplicates';
import { parseImportFields, parseJsonLoad, type LoadRequest, type Shape } from './request';
import { ENTITIES, SPECS, type Entity } from './entities';
import { ScopeLocks } from './scope-locks';
import { discardUpload, stagedChunks, Stager, type Staging } from './staging';

export interface SyncLimits {
  /** Sync jobs a tenant may have queued or running at once; more: 429. */
  activeJobsPerTenant: number;
}

export const DEFAULT_LIMITS: SyncLimits = { activeJobsPerTenant: 5 };
const SYNC_KINDS = Object.values(SPECS).map((spec) => spec.jobKind);
/**
 * How long an accepted load waits for its first phase to reach the bus before answering.
 * The job record is the outbox: whatever is not on the bus by then is sent in the
 * background and, failing that, by the sweeper, so a broker outage never turns an
 * accepted load into a refusal (a retry of which would load it twice).
 */
const DISPATCH_WAIT_MS = 2_000;

function principalOf(ctx: CallContext): PrincipalContext {
  if (!ctx.principal) throw new AppError('unauthenticated', 'This call needs the x-principal of the token it acts for.');
  return ctx.principal;
}

function entityOf(value: string): Entity {
  if (!(ENTITIES as readonly string[]).includes(value)) throw new AppError('invalid_argument', `Unknown entity ${JSON.stringify(value)}.`);
  return value as Entity;
}

function shapeOf(value: string): Shape {
  if (value !== 'sync' && value !== 'legacy') throw new AppError('invalid_argument', `Unknown shape ${JSON.stringify(value)}.`);
  return value;
}

/** JSON with object keys sorted, so equal form fields fingerprint alike whatever their order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');

/** A stored sync answer, given again. */
const replayOf = (stored: unknown): pb.SyncAnswer => ({ ...pb.SyncAnswer.fromJSON(stored), replayed: true });

export class SyncService {
  /** Per tenant: an admission counts the active jobs, then inserts one. */
  private readonly admission = new KeyedMutex();

  constructor(
    private readonly deps: {
      jobs: JobRecords;
      staging: Staging;
      keys: IdempotencyKeys;
      locks: ScopeLocks;
      processor: ChunkProcessor;
      dispatcher: Dispatcher;
      clients: Clients;
      logger: Logger;
      limits: SyncLimits;
    },
  ) {}

  /** A JSON sync or legacy load. */
  async submit(req: pb.SubmitSyncRequest, ctx: CallContext): Promise<pb.SyncAnswer> {
    const tenant = ctx.requireTenant();
    const principal = principalOf(ctx);
    const entity = entityOf(req.entity);
    const shape = shapeOf(req.shape);
    let body: unknown;
    try {
      body = JSON.parse(req.body_json);
    } catch {
      throw new ValidationError({ body: ['The request body must be valid JSON.'] });
    }
    const { request, rows } = parseJsonLoad(entity, shape, body);
    const fingerprint = sha256('json', entity, shape, req.body_json);
    const claim = req.idempotency_key
      ? await this.deps.keys.claim(keyOwnerOf(ctx), req.idempotency_key, fingerprint, Date.now(), this.recoverer(tenant))
      : null;
    if (claim?.kind === 'replay') return replayOf(claim.answer);
    const held = claim?.kind === 'claimed' ? claim : null;
    const stager = new Stager(this.deps.staging, tenant);
    let answer: pb.SyncAnswer | null = null;
    try {
      await stager.begin();
      for (const row of rows) await stager.add(row);
      const staged = await stager.finish();
      answer = await this.conclude(
        ctx,
        tenant,
        principal,
        request,
        stager.upload,
        staged,
        null,
        held && { claim_id: held.claimId, fingerprint },
      );
      if (held) await this.deps.keys.complete(held, pb.SyncAnswer.toJSON(answer), fingerprint);
      return answer;
    } catch (err) {
      await this.abandon(held, stager.upload, answer);
      throw err;
    }
  }

  /** A file import streamed as ImportFileRequest messages (see workflows.proto). */
  async importFile(requests: AsyncIterable<pb.ImportFileRequest>, ctx: CallContext): Promise<pb.SyncAnswer> {
    const tenant = ctx.requireTenant();
    const principal = principalOf(ctx);
    const messages = requests[Symbol.asyncIterator]();
    const first = await messages.next();
    const start = !first.done && first.value.part?.$case === 'start' ? first.value.part.start : null;
    if (!start) throw new AppError('invalid_argument', 'An import stream starts with a `start` message.');
    const entity = entityOf(start.entity);
    const shape = shapeOf(start.shape);
    const claim: Claim | null = start.idempotency_key
      ? await this.deps.keys.claim(keyOwnerOf(ctx), start.idempotency_key, null, Date.now(), this.recoverer(tenant))
      : null;
    const held = claim?.kind === 'claimed' ? claim : null;
    // A key used before: read the request only to compare it with the first one.
    const checking = claim?.kind === 'check' ? claim : null;
    const stager = checking ? null : new Stager(this.deps.staging, tenant);
    const csv = checking ? null : new CsvRecords();
    const fileHash = createHash('sha256');
    let header: string[] | null = null;
    let fields: unknown;
    let answer: pb.SyncAnswer | null = null;
    const take = async (records: string[][]) => {
      for (const record of records) {
        if (header === null) header = record;
        else await stager!.add(record);
      }
    };
    try {
      await stager?.begin();
      for (let next = await messages.next(); !next.done; next = await messages.next()) {
        const part = next.value.part;
        if (part?.$case === 'data') {
          fileHash.update(part.data);
          if (csv) await take(await csv.push(part.data));
        } else if (part?.$case === 'fields_json') {
          try {
            fields = JSON.parse(part.fields_json);
          } catch {
            throw new AppError('invalid_argument', 'The import form fields are not valid JSON.');
          }
        } else {
          throw new AppError('invalid_argument', 'An import stream carries one `start` message, then `data`, then `fields_json`.');
        }
      }
      if (fields === undefined)
        throw new AppError('invalid_argument', 'The import ended before its form fields: the upload was not completed.');
      const fingerprint = sha256('file', entity, shape, fileHash.digest('hex'), canonical(fields));
      if (checking) {
        IdempotencyKeys.assertSame(checking.fingerprint, fingerprint);
        return replayOf(checking.answer);
      }
      await take(await csv!.end());
      const { request, file } = parseImportFields(entity, shape, fields);
      if (header === null) throw fileError('The file is empty: it needs a header row and at least one data row.');
      const columns = columnsFor(request.spec, header, file);
      const staged = await stager!.finish();
      if (staged.rows === 0) throw fileError('The file has a header row but no data rows.');
      answer = await this.conclude(
        ctx,
        tenant,
        principal,
        request,
        stager!.upload,
        staged,
        columns,
        held && { claim_id: held.claimId, fingerprint },
      );
      if (held) await this.deps.keys.complete(held, pb.SyncAnswer.toJSON(answer), fingerprint);
      return answer;
    } catch (err) {
      await this.abandon(held, stager?.upload ?? null, answer);
      throw err;
    }
  }

  /** Finds the job an abandoned claim's request created, so its key replays that job (see IdempotencyKeys.claim). */
  private recoverer(tenant: string): RecoverAbandoned {
    return async (claimId) => {
      const job = await this.deps.jobs.jobs.findOne({ tenant, 'sync.idempotency.claim_id': claimId });
      if (!job?.sync?.idempotency) return null;
      const answer: pb.SyncAnswer = { outcome: { $case: 'job', job: jobMessage(job) }, replayed: false };
      return { answer: pb.SyncAnswer.toJSON(answer), fingerprint: job.sync.idempotency.fingerprint };
    };
  }

  /**
   * A refused load frees its key and staging. Once a job exists (`answer` is set, only the
   * key's completion failed) the key stays held, so a retry cannot start the load again.
   */
  private async abandon(held: HeldClaim | null, upload: string | null, answer: pb.SyncAnswer | null): Promise<void> {
    const log = (err: unknown) => this.deps.logger.error({ err }, 'cleaning up a refused load failed');
    if (answer?.outcome?.$case === 'job') {
      this.deps.logger.error(
        { job: answer.outcome.job.id },
        'a job was created but its answer could not be kept; the key stays held until it expires',
      );
      return;
    }
    if (held) await this.deps.keys.release(held).catch(log);
    if (upload) {
      const staged = await this.deps.staging.uploads.findById(upload).catch(() => null);
      if (staged?.state !== 'committed') await discardUpload(this.deps.staging, upload).catch(log);
    }
  }

  /** Duplicate keys marked; then the dry run's answer, or the committed job's. */
  private async conclude(
    ctx: CallContext,
    tenant: string,
    principal: PrincipalContext,
    request: LoadRequest,
    upload: string,
    staged: { rows: number; chunks: number },
    columns: Array<string | null> | null,
    idempotency: SyncState['idempotency'] | null,
  ): Promise<pb.SyncAnswer> {
    const scopeIds = request.scope ? await this.resolveScope(ctx, request) : null;
    await markDuplicates(this.deps.staging, request.spec, upload, staged.chunks, columns);
    if (request.dry_run) {
      const dryRun = await this.dryRun(ctx, tenant, request, upload, staged, columns, scopeIds);
      await discardUpload(this.deps.staging, upload);
      return { outcome: { $case: 'dry_run', dry_run: dryRun }, replayed: false };
    }
    const job = await this.commit(tenant, principal, request, upload, staged, columns, scopeIds, idempotency);
    return { outcome: { $case: 'job', job: jobMessage(job) }, replayed: false };
  }

  /** Scope names as ids per scope field; an unknown name is a 422 on it. */
  private async resolveScope(ctx: CallContext, request: LoadRequest): Promise<Record<string, number[]>> {
    const scope = request.scope!;
    const kinds = request.spec.scope;
    const asked = {
      items: [] as string[],
      customer_groups: [] as string[],
      sale_types: [] as string[],
      timing_intervals: [] as string[],
      uoms: [] as string[],
      locations: [] as string[],
    };
    for (const [field, name] of Object.entries(scope)) asked[kinds[field]!.names].push(name);
    const resolved = await this.deps.clients.reference.resolveNames(asked, {
      context: { requestId: ctx.requestId, tenant: ctx.requireTenant() },
    });
    const ids: Record<string, number[]> = {};
    const fields: Record<string, string[]> = {};
    for (const field of Object.keys(scope)) {
      const id = resolved[kinds[field]!.names]?.ids[0] ?? 0;
      if (id > 0) ids[field] = [id];
      else fields[`scope.${field}`] = [`The selected scope.${field} is invalid.`];
    }
    if (Object.keys(fields).length > 0) throw new ValidationError(fields);
    return ids;
  }

  private loadContext(
    ctx: CallContext,
    tenant: string,
    request: LoadRequest,
    loadId: string,
    columns: Array<string | null> | null,
  ): LoadContext {
    return {
      tenant,
      load_id: loadId,
      spec: request.spec,
      scope: request.mode === 'replace' ? request.scope : null,
      options: request.options,
      rows_path: request.rows_path,
      columns,
      call: { context: { requestId: ctx.requestId, tenant }, deadlineMs: 60_000 },
    };
  }

  /** What the load would do, chunk by chunk, writing nothing. */
  private async dryRun(
    ctx: CallContext,
    tenant: string,
    request: LoadRequest,
    upload: string,
    staged: { rows: number; chunks: number },
    columns: Array<string | null> | null,
    scopeIds: Record<string, number[]> | null,
  ): Promise<pb.DryRun> {
    const load = this.loadContext(ctx, tenant, request, `dry-run:${upload}`, columns);
    const totals = { created: 0, updated: 0, unchanged: 0, failed: 0 };
    let errors: pb.RowError[] = [];
    let errorsCount = 0;
    for await (const chunk of stagedChunks(this.deps.staging, upload, staged.chunks)) {
      const { plan } = await this.deps.processor.plan(load, chunk);
      const counts = planCounts(plan);
      for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += counts[key];
      errors = mergeErrors(errors, plan.errors);
      errorsCount += plan.errors_count;
    }
    let deleted = 0;
    if (request.mode === 'replace' && scopeIds) {
      // Nothing carries this load's mark, so the count is the whole scope; what the load matches stays.
      const inScope = await request.spec.deleteOutsideLoad(this.deps.clients, load.load_id, scopeIds, true, load.call);
      deleted = Math.max(0, inScope.deleted - totals.updated - totals.unchanged);
    }
    return {
      total: staged.rows,
      created: totals.created,
      updated: totals.updated,
      deleted,
      unchanged: totals.unchanged,
      invalid: totals.failed,
      errors,
      errors_count: errorsCount,
    };
  }

  /** Admission (active jobs per tenant), the job record, the scope lock, then the first phase on the bus. */
  private async commit(
    tenant: string,
    principal: PrincipalContext,
    request: LoadRequest,
    upload: string,
    staged: { rows: number; chunks: number },
    columns: Array<string | null> | null,
    scopeIds: Record<string, number[]> | null,
    idempotency: SyncState['idempotency'] | null,
  ): Promise<JobDoc> {
    const { jobs, locks, staging, dispatcher, limits } = this.deps;
    const replace = request.mode === 'replace';
    const job = await this.admission.run(tenant, async () => {
      const active = await jobs.jobs.count({ tenant, status: { $in: ['queued', 'running'] }, kind: { $in: SYNC_KINDS } });
      if (active >= limits.activeJobsPerTenant) {
        throw new AppError(
          'resource_exhausted',
          `This workspace already has ${active} sync jobs queued or running (at most ${limits.activeJobsPerTenant}); retry when one has finished.`,
          { headers: { 'Retry-After': '10' } },
        );
      }
      const sync: SyncState = {
        entity: request.spec.entity,
        mode: request.mode,
        scope: replace ? request.scope : null,
        scope_ids: replace ? scopeIds : null,
        options: request.options,
        rows_path: request.rows_path,
        upload,
        chunks: staged.chunks,
        columns,
        phase: request.options.continue_on_error ? 'loading' : 'validating',
        dispatched: null,
        validated: 0,
        invalid_rows: 0,
        applied: 0,
        failed_chunks: 0,
        failures: [],
        lock: replace ? ScopeLocks.idOf(tenant, request.spec.entity, request.scope!) : null,
        cleaned: false,
        ...(idempotency && { idempotency }),
      };
      return jobs.create({ tenant, kind: request.spec.jobKind, principal, total: staged.rows, sync });
    });
    if (replace) {
      try {
        await locks.take(tenant, request.spec.entity, request.scope!, job._id);
      } catch (err) {
        await jobs.jobs.deleteOne({ _id: job._id });
        throw err;
      }
    }
    try {
      await staging.uploads.updateOne({ _id: upload }, { $set: { state: 'committed', job_id: job._id } });
    } catch (err) {
      // Not accepted after all: no job may outlive the refusal, or the sweeper would run it.
      if (replace) await locks.release(ScopeLocks.idOf(tenant, request.spec.entity, request.scope!), job._id).catch(() => undefined);
      await jobs.jobs.deleteOne({ _id: job._id }).catch(() => undefined);
      throw err;
    }
    const dispatching = dispatcher
      .act(job)
      .catch((err: unknown) => this.deps.logger.warn({ err, job: job._id }, 'the first phase is not on the bus yet; the sweeper sends it'));
    await settleWithin(dispatching, DISPATCH_WAIT_MS);
    this.deps.logger.info({ job: job._id, kind: job.kind, rows: staged.rows, chunks: staged.chunks, mode: request.mode }, 'sync accepted');
    return job;
  }
}
