/**
 * Bump allocator for per-bucket output series. Typed arrays big enough for a plan live outside the
 * V8 heap and cost about a microsecond each to create; carving views out of a shared 64 KiB slab
 * costs a fraction of that. Regions are never reused, so every view starts zero-filled. A retained
 * plan keeps at most its slab (64 KiB) alive.
 */
const SLAB_VALUES = 8192;

let slab = new ArrayBuffer(SLAB_VALUES * Float64Array.BYTES_PER_ELEMENT);
let used = 0;

/** A zero-filled Float64Array of `length` values. */
export function allocateSeries(length: number): Float64Array {
  if (used + length > SLAB_VALUES) {
    if (length > SLAB_VALUES / 4) return new Float64Array(length);
    slab = new ArrayBuffer(SLAB_VALUES * Float64Array.BYTES_PER_ELEMENT);
    used = 0;
  }
  const series = new Float64Array(slab, used * Float64Array.BYTES_PER_ELEMENT, length);
  used += length;
  return series;
}
