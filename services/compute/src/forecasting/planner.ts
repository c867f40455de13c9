/**
 * The chunk planner: how a run's series are cut into the units of work the bus carries.
 * A small run still fans out over several workers; a large one uses chunks big enough
 * that a message, a history read and a write per chunk stay cheap next to the fitting.
 */
import type { SeriesRef } from './repository';

/** Most series in one chunk: a chunk's history is read in one or two calls. */
export const MAX_CHUNK_SERIES = 50;
/** A run of fewer series than this many chunks' worth still gets this many chunks. */
export const TARGET_CHUNKS = 8;

export interface PlannedChunk {
  seq: number;
  /** Position (in the run's series order) of the chunk's first series. */
  first_position: number;
  series: SeriesRef[];
}

export function chunkSize(seriesCount: number): number {
  return Math.max(1, Math.min(MAX_CHUNK_SERIES, Math.ceil(seriesCount / TARGET_CHUNKS)));
}

/** Consecutive runs of the series in their order; every series in exactly one chunk. */
export function planChunks(series: readonly SeriesRef[]): PlannedChunk[] {
  const size = chunkSize(series.length);
  const chunks: PlannedChunk[] = [];
  for (let first = 0; first < series.length; first += size) {
    chunks.push({ seq: chunks.length, first_position: first, series: series.slice(first, first + size) });
  }
  return chunks;
}
