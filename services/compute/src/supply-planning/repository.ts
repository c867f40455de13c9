import type { Collection, Doc, PrincipalContext, Store } from '@supply/kit';
import type { SupplyPolicy } from '../engines/mrp';
import type { GenerationMode } from './request';

/** A view plan run's work: its item-locations in chunks, and who asked (the job's owner). */
export interface PlanJobDoc extends Doc {
  /** The plan run id (its model_runs record). */
  _id: number;
  tenant: string;
  job_id: number;
  principal: PrincipalContext;
  /** The span of the request that started the run (a `traceparent`), kept while tracing is on so chunks dispatched later link to it. */
  trace_root?: string;
  mode: GenerationMode;
  supply_policy: SupplyPolicy;
  view_id: number;
  view_name: string;
  bucket: string;
  /** The view's bucket starts when the run began; every chunk plans on these. */
  period_starts: string[];
  /** Item-location ids per chunk, in the view's order. */
  chunks: number[][];
  total: number;
  /** All chunk messages are on the bus. */
  dispatched: boolean;
  /** Not finished yet; open runs count against compute's capacity. */
  open: boolean;
  created_ms: number;
}

/** A chunk once planned: what it reported, so a redelivery reports the same again without replanning. */
export interface PlanChunkDoc extends Doc {
  /** `<run id>:<seq>` */
  _id: string;
  run_id: number;
  seq: number;
  planned: number;
  failed: number;
  errors: Array<{ row: number; field: string; message: string }>;
  errors_count: number;
}

export interface PlanRepositories {
  jobs: Collection<PlanJobDoc>;
  chunks: Collection<PlanChunkDoc>;
}

export async function openPlanRepositories(store: Store): Promise<PlanRepositories> {
  const [jobs, chunks] = await Promise.all([
    store.collection<PlanJobDoc>({
      name: 'supply_plan_jobs',
      indexes: [
        {
          name: 'open_created',
          keys: [
            ['open', 1],
            ['created_ms', 1],
            ['_id', 1],
          ],
        },
      ],
    }),
    store.collection<PlanChunkDoc>({
      name: 'supply_plan_chunks',
      indexes: [
        {
          name: 'run_seq',
          keys: [
            ['run_id', 1],
            ['seq', 1],
          ],
          unique: true,
        },
      ],
    }),
  ]);
  return { jobs, chunks };
}
