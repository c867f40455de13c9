import type { Metrics } from '@supply/kit';
import type { JobDoc } from './repository';

/** What JobRecords reports as jobs start and end. */
export interface JobObserver {
  started(kind: string): void;
  finished(job: JobDoc): void;
}

const ROW_OUTCOMES = ['created', 'updated', 'deleted', 'unchanged', 'failed'] as const;

/** Job families of the process registry: started and ended by kind and final status, duration, rows. */
export function jobMetrics(metrics: Metrics): JobObserver {
  return {
    started(kind) {
      metrics.jobsStarted.inc({ kind });
    },
    finished(job) {
      const labels = { kind: job.kind, status: job.status };
      metrics.jobsFinished.inc(labels);
      const took = (Date.parse(job.finished_at ?? '') - Date.parse(job.created_at)) / 1000;
      if (Number.isFinite(took) && took >= 0) metrics.jobDuration.observe(labels, took);
      for (const outcome of ROW_OUTCOMES) {
        const n = Number(job.result[outcome] ?? 0);
        if (Number.isFinite(n) && n > 0) metrics.jobRows.inc({ kind: job.kind, outcome }, n);
      }
    },
  };
}
