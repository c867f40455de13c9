/**
 * The forecast workers: each chunk message reads its series' History in bulk, runs the
 * library, writes the forecasts as sales records of sale type Forecast, records every
 * series' model and holdout error, and reports the chunk as a job event. The last chunk
 * to settle queues the finishing step, which replaces the earlier forecasts of the series
 * just forecast and ends the job.
 *
 * Delivery is at least once and every step is idempotent: a chunk is deterministic, so a
 * redelivered one rewrites the same records, and its writes carry the chunk's apply id, so
 * the transactional service reports what the chunk's first run did with them (counted once
 * by the job's fold); the finishing step keeps its first count of what it deletes.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import {
  currentContext,
  DEFAULT_MAX_DELIVERIES,
  PartLedger,
  partEvent,
  publicReason,
  replayOf,
  type MessageEnvelope,
  type Bus,
  type CallOverrides,
  type Collection,
  type Delivery,
  type Logger,
  type Metrics,
} from '@supply/kit';
import { JOB_EVENTS_QUEUE, MAX_JOB_ERRORS, queue, supply_transactional_v1 as tpb, type ExternalJobEvent } from '@supply/contracts';
import { forecastDatedSeries, toPeriodSeries } from '../engines/forecast/index';
import type { ModelRunDoc } from '../runs/repository';
import { readHistory, seriesInput, type SalesPort } from './history';
import { summarizeAccuracy } from './diagnostics';
import { latestId, periodSigma, type LatestForecasts } from './latest';
import {
  chunkId,
  resultId,
  resultKeys,
  type ChunkCounts,
  type SeriesIntervals,
  type ForecastChunkDoc,
  type ForecastChunkOutcome,
  type ForecastCollections,
  type ForecastRunDoc,
  type SeriesResultDoc,
} from './repository';

/** The kind of a forecast run's job. */
export const FORECAST_JOB_KIND = 'forecast_run';

/** The durable work queue of forecast chunks and finishing steps (the bus namespace prefixes it). */
export const FORECAST_QUEUE = queue<ForecastMessage>('compute.forecast-chunks');

export type ForecastMessage =
  { run_id: number; tenant: string; step: 'chunk'; seq: number } | { run_id: number; tenant: string; step: 'finish' };

/** Rows per ApplySales call (its maximum). */
const APPLY_BATCH = 10_000;
/** Internal calls of a chunk get this long. */
const CALL_DEADLINE_MS = 60_000;
/** Stored forecast quantities keep this many decimals (whole-unit forecasts are integers already). */
const QUANTITY_DECIMALS = 4;
/** A run that has not moved for this long is looked after by the sweep. */
export const STALLED_RUN_MS = 60_000;

interface RowError {
  row: number;
  field: string;
  message: string;
}

export interface WorkerDeps {
  forecasts: ForecastCollections;
  modelRuns: Collection<ModelRunDoc>;
  /** Where each series' latest forecast uncertainty is kept for planning (absent: not kept). */
  latest?: LatestForecasts;
  sales: SalesPort;
  bus: Bus;
  logger: Logger;
  metrics?: Metrics;
  maxDeliveries?: number;
}

/** A forecast as a sales quantity: never negative (a sales record cannot be), a few decimals. */
export function storedQuantity(value: number): number {
  const scale = 10 ** QUANTITY_DECIMALS;
  return value > 0 ? Math.round(value * scale) / scale : 0;
}

/** The intervals as kept beside the stored forecasts: same decimals, and always around the stored value. */
export function storedIntervals(
  stored: readonly number[],
  intervals: SeriesIntervals | Omit<SeriesIntervals, 'forecast'>,
): SeriesIntervals {
  const scale = 10 ** QUANTITY_DECIMALS;
  const round = (v: number) => Math.round(v * scale) / scale;
  const lo = (values: readonly number[]) => stored.map((f, k) => Math.min(round(values[k] ?? f), f));
  const hi = (values: readonly number[]) => stored.map((f, k) => Math.max(round(values[k] ?? f), f));
  return { forecast: [...stored], lo80: lo(intervals.lo80), hi80: hi(intervals.hi80), lo95: lo(intervals.lo95), hi95: hi(intervals.hi95) };
}

export function callFor(run: ForecastRunDoc): CallOverrides {
  return {
    context: { requestId: currentContext()?.requestId ?? `forecast-job-${run.job_id}`, tenant: run.tenant, principal: run.principal },
    deadlineMs: CALL_DEADLINE_MS,
  };
}

const seriesLabel = (s: SeriesResultDoc['series']) => `${s.item_name} / ${s.customer_group_name}`;
/** Why a series could not be forecast, as a job may say it: the engine's word on the series (a RangeError), else no internals. */
const reasonOf = (err: unknown) => (err instanceof RangeError ? err.message : publicReason(err));

export class ForecastWorker {
  private readonly maxDeliveries: number;
  private readonly ledger: PartLedger<ForecastChunkOutcome>;

  constructor(private readonly deps: WorkerDeps) {
    deps.metrics?.expectParts(FORECAST_JOB_KIND);
    this.maxDeliveries = deps.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
    this.ledger = new PartLedger(deps.forecasts.parts, deps);
  }

  readonly handle = async (message: ForecastMessage, delivery: Delivery, envelope?: MessageEnvelope): Promise<void> => {
    const run = await this.deps.forecasts.runs.findById(message.run_id);
    if (!run || run.tenant !== message.tenant) {
      this.deps.logger.warn({ run: message.run_id, step: message.step }, 'forecast message for no run; dropped');
      return;
    }
    // A finished run takes only an operator's replay of a chunk that failed.
    if (run.phase === 'done' && !(message.step === 'chunk' && replayOf(envelope) > 0)) return;
    if (message.step === 'chunk') return this.chunk(run, message.seq, delivery, envelope);
    try {
      await this.finish(run, delivery);
    } catch (err) {
      this.deps.metrics?.partFailed(FORECAST_JOB_KIND, delivery, err);
      throw err;
    }
  };

  private send(event: ExternalJobEvent): Promise<void> {
    return this.deps.bus.send(JOB_EVENTS_QUEUE, event);
  }

  // ------------------------------------------------------------------ chunks

  private async chunk(run: ForecastRunDoc, seq: number, delivery: Delivery, envelope?: MessageEnvelope): Promise<void> {
    const { chunks } = this.deps.forecasts;
    const chunk = await chunks.findById(chunkId(run._id, seq));
    if (!chunk) throw new Error(`chunk ${seq} of forecast run ${run._id} is missing`);
    await this.ledger.settle(
      {
        job: run._id,
        part: `chunk-${seq}`,
        kind: FORECAST_JOB_KIND,
        run: async () => {
          await this.markStarted(run);
          return this.forecastChunk(run, chunk);
        },
        failed: (_err, reason) => this.failChunk(run, chunk, reason),
        report: (record) =>
          this.send(
            partEvent(record, run, (o) => ({ processed: o.processed, result: o.counts, errors: o.errors, errors_count: o.errors_count })),
          ),
        recorded: async (record) => {
          // The chunk's state mirrors its record, for the service's backlog count.
          await chunks.updateOne({ _id: chunk._id }, { $set: { state: record.state, updated_at: Date.now() } });
          if (record.revision > 0) await this.resummarize(run._id);
          await this.afterChunk(run);
        },
      },
      delivery,
      envelope,
    );
  }

  private async markStarted(run: ForecastRunDoc): Promise<void> {
    if (run.started_sent) return;
    await this.send({ type: 'started', job_id: run.job_id, tenant: run.tenant, total: run.series_count });
    await this.deps.forecasts.runs.updateOne({ _id: run._id }, { $set: { started_sent: true, updated_at: Date.now() } });
    await this.deps.modelRuns.updateOne({ _id: run._id, status: 'queued' }, { $set: { status: 'running' } });
  }

  /** Forecasts every series of the chunk and writes the results; a series that fails is reported, not fatal. */
  async forecastChunk(run: ForecastRunDoc, chunk: ForecastChunkDoc): Promise<ForecastChunkOutcome> {
    const call = callFor(run);
    const history = await readHistory(
      this.deps.sales,
      call,
      chunk.series.map((s) => s.item_customer_group_id),
      { historyTypeId: run.sale_types.history.id, start: run.history_start, end: run.history_end },
    );
    const rows: tpb.SalesRow[] = [];
    const results: SeriesResultDoc[] = [];
    const errors: RowError[] = [];
    for (const [i, series] of chunk.series.entries()) {
      const position = chunk.first_position + i;
      const result: SeriesResultDoc = {
        _id: resultId(run._id, position),
        run_id: run._id,
        position,
        series,
        status: 'skipped',
        model: '',
        holdout_error: null,
        series_class: '',
        timing_interval: '',
        timing_interval_id: 0,
        forecast_dates: [],
        history_periods: 0,
        forecast_start: '',
        forecast_end: '',
        message: 'No History sales in the history window.',
        parameters: {},
        validation: null,
        intervals: null,
        keys: resultKeys(series, ''),
      };
      try {
        const input = seriesInput(history.get(series.item_customer_group_id) ?? [], run.history_end);
        if (input) {
          const forecast = forecastDatedSeries(input.points, {
            horizon: run.forecast_periods,
            frequency: input.frequency,
            algorithm: run.algorithm,
            constraint: run.forecast_constraint,
            missingImputation: run.missing_imputation,
          });
          const stored = forecast.forecast.map(storedQuantity);
          for (const [k, sell_date] of forecast.dates.entries()) {
            rows.push({
              ...series,
              sale_type_id: run.sale_types.forecast.id,
              sale_type_name: run.sale_types.forecast.name,
              timing_interval_id: input.interval.id,
              timing_interval_span: input.interval.span,
              uom_id: input.uom.id,
              uom_name: input.uom.name,
              uom_abbr: input.uom.abbr,
              sell_date,
              quantity: stored[k]!,
            });
          }
          Object.assign(result, {
            status: 'forecast',
            model: forecast.model,
            holdout_error: forecast.holdoutError,
            series_class: forecast.seriesClass,
            timing_interval: input.interval.span,
            timing_interval_id: input.interval.id,
            forecast_dates: forecast.dates,
            history_periods: toPeriodSeries(input.points, input.frequency).values.length,
            forecast_start: forecast.dates[0] ?? '',
            forecast_end: forecast.dates[forecast.dates.length - 1] ?? '',
            message: '',
            parameters: { ...forecast.parameters },
            validation: forecast.validation ? { ...forecast.validation } : null,
            intervals: storedIntervals(stored, forecast.intervals),
            keys: resultKeys(series, forecast.model),
          });
        }
      } catch (err) {
        if (!(err instanceof RangeError))
          this.deps.logger.warn({ err, job: run.job_id, series: series.item_customer_group_id }, 'a series could not be forecast');
        Object.assign(result, { status: 'failed', message: `Could not be forecast: ${reasonOf(err)}.` });
        errors.push({
          row: position,
          field: 'item_customer_group_id',
          message: `${seriesLabel(series)} (item-customer-group ${series.item_customer_group_id}): ${result.message}`,
        });
      }
      results.push(result);
      if (result.status === 'forecast') {
        this.deps.metrics?.forecastSeries.inc({ outcome: 'ok' });
        this.deps.metrics?.forecastModels.inc({ model: result.model });
      } else if (result.status === 'failed') this.deps.metrics?.forecastSeries.inc({ outcome: 'failed' });
      // Fitting is CPU work: let the process answer other calls between series.
      await yieldToEventLoop();
    }

    const counts: ChunkCounts = { created: 0, updated: 0, unchanged: 0, failed: errors.length * run.forecast_periods };
    for (let i = 0; i < rows.length; i += APPLY_BATCH) {
      const applied = await this.deps.sales.applySales(
        {
          load_id: run.load_id,
          rows: rows.slice(i, i + APPLY_BATCH),
          refuse_creates: false,
          refuse_updates: false,
          dry_run: false,
          // Records carry the chunk's id, so a chunk run again after a crash between this write and its
          // record in the ledger reports what its first run did (created), not `unchanged`.
          apply_id: `forecast-chunk:${chunk._id}`,
        },
        call,
      );
      counts.created += applied.created;
      counts.updated += applied.updated;
      counts.unchanged += applied.unchanged;
    }
    await this.deps.forecasts.results.bulkUpsert(results.map(({ _id, ...set }) => ({ key: { _id }, set })));
    await this.keepLatest(run, results);
    return { processed: chunk.series.length, counts, errors: errors.slice(0, MAX_JOB_ERRORS), errors_count: errors.length };
  }

  /** The uncertainty of the forecasts just written becomes their series' latest (a skipped or failed series keeps its earlier one, as its forecasts stay). */
  private async keepLatest(run: ForecastRunDoc, results: readonly SeriesResultDoc[]): Promise<void> {
    const latest = this.deps.latest;
    if (!latest) return;
    const now = Date.now();
    const rows = results.flatMap((r) => {
      const iv = r.intervals;
      if (r.status !== 'forecast' || !iv) return [];
      const set = {
        tenant: run.tenant,
        item_id: r.series.item_id,
        customer_group_id: r.series.customer_group_id,
        run_id: run._id,
        timing_interval: r.timing_interval,
        dates: r.forecast_dates,
        sigma: iv.forecast.map((f, k) => periodSigma(f, iv.hi80[k]!, iv.hi95[k]!)),
        updated_at: now,
      };
      return [{ key: { _id: latestId(run.tenant, r.series.item_customer_group_id) }, set }];
    });
    if (rows.length > 0) await latest.bulkUpsert(rows);
  }

  /** The bus gave up on the chunk: every series of it is recorded failed, with the reason. */
  private async failChunk(run: ForecastRunDoc, chunk: ForecastChunkDoc, reason: string): Promise<ForecastChunkOutcome> {
    const message = `Could not be forecast: ${reason}.`;
    const results = chunk.series.map((series, i) => ({ position: chunk.first_position + i, series }));
    await this.deps.forecasts.results.bulkUpsert(
      results.map(({ position, series }) => ({
        key: { _id: resultId(run._id, position) },
        set: {
          run_id: run._id,
          position,
          series,
          status: 'failed' as const,
          model: '',
          holdout_error: null,
          series_class: '',
          timing_interval: '',
          timing_interval_id: 0,
          forecast_dates: [],
          history_periods: 0,
          forecast_start: '',
          forecast_end: '',
          message,
          parameters: {},
          validation: null,
          intervals: null,
          keys: resultKeys(series, ''),
        },
      })),
    );
    const counts: ChunkCounts = { created: 0, updated: 0, unchanged: 0, failed: chunk.series.length * run.forecast_periods };
    const errors = results.map(({ position, series }) => ({
      row: position,
      field: 'item_customer_group_id',
      message: `${seriesLabel(series)}: ${message}`,
    }));
    return { processed: chunk.series.length, counts, errors: errors.slice(0, MAX_JOB_ERRORS), errors_count: errors.length };
  }

  /** Shows the run moving, and queues the finishing step once every chunk has settled. */
  private async afterChunk(run: ForecastRunDoc): Promise<void> {
    await this.deps.forecasts.runs.updateOne({ _id: run._id }, { $set: { updated_at: Date.now() } });
    if (await this.allSettled(run)) await this.queueFinish(run);
  }

  private async allSettled(run: ForecastRunDoc): Promise<boolean> {
    return (await this.ledger.settled(run._id)) >= run.chunks;
  }

  async queueFinish(run: ForecastRunDoc): Promise<void> {
    await this.deps.bus.send(
      FORECAST_QUEUE,
      { run_id: run._id, tenant: run.tenant, step: 'finish' },
      { messageId: `forecast:${run._id}:finish` },
    );
  }

  // ------------------------------------------------------------------ finishing

  private async finish(run: ForecastRunDoc, delivery: Delivery): Promise<void> {
    // `dispatching` too: a quick chunk may settle before the service has noted every chunk sent.
    const claimed = await this.deps.forecasts.runs.updateOne(
      { _id: run._id, phase: { $in: ['dispatching', 'running'] } },
      { $set: { phase: 'finalizing', updated_at: Date.now() } },
    );
    // Several chunks may settle at once and each queue the step: the first delivery to claim it runs it (or a redelivery of that one).
    if (claimed.modified === 0 && delivery.deliveryCount === 1) return;
    if (run.outcome) return this.announce(run, run.outcome);
    let replaceFailure: string | null = null;
    let deleted = 0;
    try {
      deleted = await this.replaceEarlierForecasts(run);
      if (deleted > 0) await this.send({ type: 'part', job_id: run.job_id, tenant: run.tenant, part: 'replace', result: { deleted } });
    } catch (err) {
      if (delivery.deliveryCount < this.maxDeliveries && !delivery.willDeadLetter?.(err)) throw err;
      replaceFailure = publicReason(err);
      this.deps.logger.error({ err, run: run._id, job: run.job_id }, 'replacing earlier forecasts failed for good');
    }
    // The job waits for the parts `finished` announces, so nothing polls it here.
    const outcome = {
      ...(await this.outcomeOf(run, deleted, replaceFailure)),
      parts: run.chunks + (deleted > 0 ? 1 : 0),
      deleted,
      replace_failure: replaceFailure,
    };
    const accuracy = await this.accuracyOf(run);
    await this.deps.forecasts.runs.updateOne(
      { _id: run._id },
      { $set: { outcome, accuracy, finished_at: Date.now(), updated_at: Date.now() } },
    );
    // Freed before the job says it finished, so a client that sees it finished can start the next run.
    await this.deps.forecasts.locks.deleteOne({ _id: run.tenant, run_id: run._id });
    await this.announce(run, outcome);
  }

  private async accuracyOf(run: ForecastRunDoc) {
    const validations = [];
    for await (const r of this.deps.forecasts.results.iterate({ run_id: run._id, status: 'forecast' }))
      if (r.validation) validations.push(r.validation);
    return summarizeAccuracy(validations);
  }

  /**
   * A chunk replayed after its run finished: the run's summary, accuracy and status are made
   * again from the part ledger and the series results (its replace step is not repeated). Any
   * run with an outcome counts as finished, also one still marking itself done after telling
   * the job: a replay landing in that moment was skipped, and the summary kept the failure.
   */
  private async resummarize(runId: number): Promise<void> {
    const run = await this.deps.forecasts.runs.findById(runId);
    if (!run?.outcome) return;
    const { parts, deleted = 0, replace_failure = null } = run.outcome;
    const outcome = { ...(await this.outcomeOf(run, deleted, replace_failure)), parts, deleted, replace_failure };
    await this.deps.forecasts.runs.updateOne(
      { _id: run._id },
      { $set: { outcome, accuracy: await this.accuracyOf(run), updated_at: Date.now() } },
    );
    await this.deps.modelRuns.updateOne({ _id: run._id }, { $set: { status: outcome.status } });
    this.deps.logger.info(
      { run: run._id, job: run.job_id, status: outcome.status },
      'forecast run summarised again after a replayed chunk',
    );
  }

  /**
   * A run replaces the whole earlier forecast of every series it forecast: afterwards the
   * series' Forecast records are the new ones only. Transactional deletes by load within
   * a sale type and customer groups, so the Forecast records of those groups that must stay
   * (other series, and series skipped or failed here) are first marked with this run's
   * load. The same walk counts what the delete will take, kept from the first attempt.
   */
  async replaceEarlierForecasts(run: ForecastRunDoc): Promise<number> {
    const { results, runs } = this.deps.forecasts;
    const written = new Map<number, { intervalId: number; dates: Set<string> }>();
    const groups = new Set<number>();
    for await (const r of results.iterate({ run_id: run._id, status: 'forecast' })) {
      written.set(r.series.item_customer_group_id, { intervalId: r.timing_interval_id, dates: new Set(r.forecast_dates) });
      groups.add(r.series.customer_group_id);
    }
    if (written.size === 0) return 0;
    const call = callFor(run);
    const keep: tpb.SalesRow[] = [];
    const mark = async () => {
      if (keep.length === 0) return;
      await this.deps.sales.applySales(
        { load_id: run.load_id, rows: keep.splice(0), refuse_creates: true, refuse_updates: false, dry_run: false },
        call,
      );
    };
    let doomed = 0;
    let after = 0;
    for (;;) {
      const page = await this.deps.sales.listSales(
        { after_id: after, limit: APPLY_BATCH, filter: tpb.SalesFilter.fromPartial({ sale_type_names: [run.sale_types.forecast.name] }) },
        call,
      );
      for (const r of page.records) {
        if (r.sale_type_id !== run.sale_types.forecast.id || !groups.has(r.customer_group_id)) continue;
        const fresh = written.get(r.item_customer_group_id);
        if (fresh) {
          if (r.timing_interval_id !== fresh.intervalId || !fresh.dates.has(r.sell_date)) doomed++;
          continue;
        }
        const { id: _id, created_at: _c, updated_at: _u, item_hierarchy: _ih, customer_group_hierarchy: _ch, ...row } = r;
        keep.push(row);
        if (keep.length >= APPLY_BATCH) await mark();
      }
      if (!page.has_more || page.records.length === 0) break;
      after = page.records[page.records.length - 1]!.id;
    }
    await mark();
    await runs.updateOne({ _id: run._id, planned_deletes: null }, { $set: { planned_deletes: doomed } });
    const planned = (await runs.findById(run._id))?.planned_deletes ?? doomed;
    await this.deps.sales.deleteSalesOutsideLoad(
      { load_id: run.load_id, sale_type_ids: [run.sale_types.forecast.id], customer_group_ids: [...groups], dry_run: false },
      call,
    );
    return planned;
  }

  /**
   * Job events may be folded out of order by concurrent consumers, and a job ignores
   * events once finished: wait (bounded) until the job shows every chunk and the deletes.
   */
  /** The run's summary from its chunks and series results. */
  private async outcomeOf(
    run: ForecastRunDoc,
    deleted: number,
    replaceFailure: string | null,
  ): Promise<NonNullable<ForecastRunDoc['outcome']>> {
    const { results } = this.deps.forecasts;
    const totals: ChunkCounts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
    for (const c of await this.ledger.list(run._id)) {
      for (const key of Object.keys(totals) as Array<keyof ChunkCounts>) totals[key] += c.outcome.counts[key];
    }
    const [forecast, skipped, failed] = await Promise.all(
      (['forecast', 'skipped', 'failed'] as const).map((status) => results.count({ run_id: run._id, status })),
    );
    const written = totals.created + totals.updated + totals.unchanged + deleted;
    const status = failed === 0 && replaceFailure === null ? 'succeeded' : written > 0 ? 'partially_succeeded' : 'failed';
    const parts = [
      `Forecast ${forecast} of ${run.series_count} series, ${run.forecast_periods} periods each: ${totals.created} forecast records created, ${totals.updated} updated, ${totals.unchanged} unchanged, ${deleted} earlier forecast records deleted.`,
    ];
    if (skipped) parts.push(`${skipped} series had no History sales in the history window and were skipped.`);
    if (failed) parts.push(`${failed} series could not be forecast (see errors).`);
    if (replaceFailure) parts.push(`The earlier forecasts could not be replaced: ${replaceFailure}.`);
    return { status, message: parts.join(' ') };
  }

  /** Tells the job how the run ended (repeatable: a job takes its first finish only). */
  private async announce(run: ForecastRunDoc, outcome: NonNullable<ForecastRunDoc['outcome']>): Promise<void> {
    await this.deps.modelRuns.updateOne({ _id: run._id }, { $set: { status: outcome.status, finished_at: new Date().toISOString() } });
    await this.send({
      type: 'finished',
      job_id: run.job_id,
      tenant: run.tenant,
      status: outcome.status,
      message: outcome.message,
      ...(outcome.parts ? { parts: outcome.parts } : {}),
    });
    // Only once the job was told: a run left finalizing is announced again.
    await this.deps.forecasts.runs.updateOne({ _id: run._id }, { $set: { phase: 'done', updated_at: Date.now() } });
    this.deps.logger.info({ run: run._id, job: run.job_id, status: outcome.status, series: run.series_count }, 'forecast run finished');
  }

  // ------------------------------------------------------------------ sweep

  /**
   * Looks after runs that stopped moving: one whose chunks never all reached the bus (its
   * process died while answering) fails; one whose chunks have all settled but that did not
   * finish (its finishing step was lost) gets the step queued again.
   */
  async sweep(now = Date.now()): Promise<void> {
    const { runs } = this.deps.forecasts;
    for (const run of await runs.find({
      phase: { $in: ['dispatching', 'running', 'finalizing'] },
      updated_at: { $lt: now - STALLED_RUN_MS },
    })) {
      if (run.phase === 'dispatching') {
        await this.abandon(run, now);
        continue;
      }
      if (!(await this.allSettled(run))) continue;
      await runs.updateOne({ _id: run._id, phase: run.phase }, { $set: { phase: 'running', updated_at: now } });
      await this.queueFinish(run);
    }
  }

  /** Fails a run whose chunks did not all reach the bus, and frees its tenant. */
  async abandon(run: ForecastRunDoc, now = Date.now()): Promise<void> {
    const outcome = {
      status: 'failed' as const,
      message: 'The forecast run was interrupted before its work was queued; nothing was forecast. Send the request again.',
    };
    await this.deps.forecasts.runs.updateOne(
      { _id: run._id },
      { $set: { outcome, accuracy: summarizeAccuracy([]), finished_at: now, updated_at: now } },
    );
    await this.deps.forecasts.locks.deleteOne({ _id: run.tenant, run_id: run._id });
    await this.announce(run, outcome);
  }
}
