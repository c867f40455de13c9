/**
 * What the compute service keeps about forecast runs (its own database `compute`): the
 * run and where it is, its chunks of series, the result of every series (the model chosen
 * and its holdout error), and the one-run-per-tenant lock. The public summary of a run is
 * its `model_runs` row (ListModelRuns).
 */
import { partCollection, type Collection, type Doc, type PartRecord, type PrincipalContext, type Store } from '@supply/kit';
import type { Algorithm, Constraint, MissingImputation } from '../engines/forecast/index';
import type { ForecastScope } from './request';

/** One item-customer-group with the names it is written under. */
export interface SeriesRef {
  item_customer_group_id: number;
  item_id: number;
  item_name: string;
  customer_group_id: number;
  customer_group_name: string;
}

export interface NamedId {
  id: number;
  name: string;
}

/**
 * `dispatching`: chunks being put on the bus; `running`: chunks in the workers' hands;
 * `finalizing`: every chunk settled, earlier forecasts being replaced; `done`.
 */
export type RunPhase = 'dispatching' | 'running' | 'finalizing' | 'done';

export interface ForecastRunDoc extends Doc {
  /** The `model_runs` id of the run. */
  _id: number;
  tenant: string;
  job_id: number;
  /** Who started it: the job is theirs, and finishing reads it as them. */
  principal: PrincipalContext;
  phase: RunPhase;
  scope: ForecastScope;
  forecast_periods: number;
  algorithm: Algorithm;
  missing_imputation: MissingImputation;
  forecast_constraint: Constraint;
  history_start: string | null;
  /** The effective end: as asked, else the selection's latest History date (null: it has none). */
  history_end: string | null;
  sale_types: { history: NamedId; forecast: NamedId };
  series_count: number;
  chunks: number;
  /** Every forecast record of the run is written (or matched) under this load id. */
  load_id: string;
  /** Earlier forecast records the replace step found to delete (kept from its first attempt). */
  planned_deletes: number | null;
  started_sent: boolean;
  /** How the run ended, kept before the tenant is freed and the job told (which may then be repeated). */
  /** `parts`: the part events the job gets in all (one per chunk, plus `replace` when it deleted). */
  outcome: {
    status: 'succeeded' | 'partially_succeeded' | 'failed';
    message: string;
    parts?: number;
    /** What the replace step deleted and why it could not (kept so a replayed chunk's summary can be made again). */
    deleted?: number;
    replace_failure?: string | null;
  } | null;
  /** Kept by the finishing step with the outcome. */
  accuracy?: AccuracySummary | null;
  finished_at?: number | null;
  created_at: number;
  /** Moves with every step; a run that stops moving is looked after by the sweep. */
  updated_at: number;
}

export type ChunkState = 'pending' | 'done' | 'failed';

/** Forecast records a chunk wrote, by outcome; `failed`: the records its failed series would have had. */
export interface ChunkCounts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

/** What a chunk did, recorded once in the run's part ledger. */
export interface ForecastChunkOutcome {
  /** Series of the chunk. */
  processed: number;
  counts: ChunkCounts;
  /** The first errors (at most the job's limit); `errors_count` counts them all. */
  errors: Array<{ row: number; field: string; message: string }>;
  errors_count: number;
}

export interface ForecastChunkDoc extends Doc {
  /** `<run>:<seq>` */
  _id: string;
  run_id: number;
  seq: number;
  /** Position (in the run's series order) of `series[0]`. */
  first_position: number;
  series: SeriesRef[];
  /** Mirrors the chunk's record in the part ledger (`pending` until it has one). */
  state: ChunkState;
  updated_at: number;
}

export type SeriesStatus = 'forecast' | 'skipped' | 'failed';

/** Holdout accuracy of the chosen model (null: not measured or no usable scale). */
export interface SeriesValidation {
  mase: number | null;
  rmsse: number | null;
  bias: number | null;
}

/** The forecast written per period and its 80% and 95% prediction intervals, aligned with `forecast_dates`. */
export interface SeriesIntervals {
  forecast: number[];
  lo80: number[];
  hi80: number[];
  lo95: number[];
  hi95: number[];
}

/** Mean holdout accuracy over a finished run's series that have one. */
export interface AccuracySummary {
  series: number;
  mean_mase: number | null;
  median_mase: number | null;
  mean_rmsse: number | null;
  mean_bias: number | null;
}

export interface SeriesResultDoc extends Doc {
  /** `<run>:<position>` */
  _id: string;
  run_id: number;
  position: number;
  series: SeriesRef;
  status: SeriesStatus;
  model: string;
  holdout_error: number | null;
  series_class: string;
  timing_interval: string;
  /** The interval and dates of the records written (what the replace step keeps). */
  timing_interval_id: number;
  forecast_dates: string[];
  history_periods: number;
  forecast_start: string;
  forecast_end: string;
  message: string;
  /** Fitted parameters of the model (absent on results recorded before diagnostics were kept). */
  parameters?: Record<string, number>;
  validation?: SeriesValidation | null;
  intervals?: SeriesIntervals | null;
  /** Lower-cased names for case-insensitive filters: item, customer group, model, model family. */
  keys?: { item: string; customer_group: string; model: string; family: string };
}

/** The tenant's forecast run in progress (one at a time: a run replaces earlier forecasts). */
export interface RunLockDoc extends Doc {
  /** The tenant. */
  _id: string;
  run_id: number;
  locked_at: number;
}

export interface ForecastCollections {
  runs: Collection<ForecastRunDoc>;
  chunks: Collection<ForecastChunkDoc>;
  /** The part ledger: each chunk's outcome, recorded once. */
  parts: Collection<PartRecord<ForecastChunkOutcome>>;
  results: Collection<SeriesResultDoc>;
  locks: Collection<RunLockDoc>;
}

export async function openForecastCollections(store: Store): Promise<ForecastCollections> {
  const [runs, chunks, parts, results, locks] = await Promise.all([
    store.collection<ForecastRunDoc>({
      name: 'forecast_runs',
      indexes: [
        {
          name: 'phase',
          keys: [
            ['phase', 1],
            ['_id', 1],
          ],
        },
        {
          name: 'tenant_job',
          keys: [
            ['tenant', 1],
            ['job_id', 1],
          ],
        },
        {
          name: 'tenant_id',
          keys: [
            ['tenant', 1],
            ['_id', -1],
          ],
        },
      ],
    }),
    store.collection<ForecastChunkDoc>({
      name: 'forecast_chunks',
      indexes: [
        {
          name: 'run_state',
          keys: [
            ['run_id', 1],
            ['state', 1],
          ],
        },
        { name: 'state', keys: [['state', 1]] },
      ],
    }),
    store.collection<PartRecord<ForecastChunkOutcome>>(partCollection('forecast_parts')),
    store.collection<SeriesResultDoc>({
      name: 'forecast_series',
      indexes: [
        {
          name: 'run_position',
          keys: [
            ['run_id', 1],
            ['position', 1],
          ],
        },
      ],
    }),
    store.collection<RunLockDoc>({ name: 'forecast_locks' }),
  ]);
  return { runs, chunks, parts, results, locks };
}

/** The lower-cased names a result is filtered by; the model family is the name before its parameters. */
export function resultKeys(series: SeriesRef, model: string): NonNullable<SeriesResultDoc['keys']> {
  const lower = model.toLowerCase();
  return {
    item: series.item_name.toLowerCase(),
    customer_group: series.customer_group_name.toLowerCase(),
    model: lower,
    family: lower.replace(/\(.*$/, ''),
  };
}

export const chunkId = (runId: number, seq: number) => `${runId}:${seq}`;
export const resultId = (runId: number, position: number) => `${runId}:${position}`;
