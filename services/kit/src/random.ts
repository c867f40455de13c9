/**
 * Seeded pseudo-random numbers: demo data, property tests and benchmarks replay exactly from a
 * seed. Not for anything security related (`node:crypto` is).
 */

/** mulberry32: a small, fast, seedable generator of floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string, as a seed. */
export function seedOf(text: string): number {
  return [...text].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16777619), 2166136261) >>> 0;
}
