import { partCollection, type Collection, type Doc, type PartRecord, type PrincipalContext, type Store } from '@supply/kit';
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

/** What a chunk of a plan run did, recorded once in the part ledger, so a redelivery reports it again without replanning. */
export interface PlanChunkOutcome {
  seq: number;
  planned: number;
  failed: number;
  errors: Array<{ row: number; field: string; message: string }>;
  errors_count: number;
}

export type PlanChunkDoc = PartRecord<PlanChunkOutcome>;

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
    store.collection<PlanChunkDoc>(partCollection('supply_plan_parts')),
  ]);
  return { jobs, chunks };
}
