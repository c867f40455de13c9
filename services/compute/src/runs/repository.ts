import type { Collection, Doc, Store } from '@supply/kit';

/** One engine run (a forecast or a plan) and what it chose, kept for diagnostics. */
export interface ModelRunDoc extends Doc {
  _id: number;
  tenant: string;
  kind: 'forecast' | 'supply_plan';
  job_id: number;
  status: string;
  created_at: string;
  finished_at: string | null;
}

export function openModelRuns(store: Store): Promise<Collection<ModelRunDoc>> {
  return store.collection<ModelRunDoc>({
    name: 'model_runs',
    autoIncrement: true,
    indexes: [
      {
        name: 'tenant_id',
        keys: [
          ['tenant', 1],
          ['_id', 1],
        ],
      },
      {
        name: 'tenant_job',
        keys: [
          ['tenant', 1],
          ['job_id', 1],
          ['_id', 1],
        ],
      },
    ],
  });
}
