/**
 * Derivative-free minimisers used to fit smoothing parameters. Both are
 * deterministic: the same objective and start give the same answer.
 */

export interface Minimum {
  x: number[];
  value: number;
  evaluations: number;
}

export interface NelderMeadOptions {
  /** Initial simplex edge per coordinate (defaults to 10% of |x0| or 0.1). */
  steps?: readonly number[];
  maxEvaluations?: number;
  /** Relative tolerance on the spread of objective values across the simplex (R's reltol). */
  tolerance?: number;
  /** Largest coordinate distance from the best vertex still counted as converged. */
  sizeTolerance?: number;
}

/** Non-finite objective values are treated as "very bad" so the simplex walks away from them. */
const PENALTY = 1e300;

function safe(value: number): number {
  return Number.isFinite(value) ? value : PENALTY;
}

function diameter(simplex: readonly number[][], best: number): number {
  let largest = 0;
  const origin = simplex[best];
  for (const vertex of simplex) {
    for (let j = 0; j < vertex.length; j++) largest = Math.max(largest, Math.abs(vertex[j] - origin[j]));
  }
  return largest;
}

/** Sorts vertex indices by value, ties by index (the order a comparator sort gives), by insertion: the simplex is small and mostly sorted. */
function sortOrder(order: number[], values: readonly number[]): void {
  for (let i = 1; i < order.length; i++) {
    const index = order[i];
    const value = values[index];
    let k = i - 1;
    while (k >= 0 && (values[order[k]] > value || (values[order[k]] === value && order[k] > index))) {
      order[k + 1] = order[k];
      k--;
    }
    order[k + 1] = index;
  }
}

/**
 * Nelder-Mead simplex minimisation with the standard coefficients
 * (reflection 1, expansion 2, contraction 0.5, shrink 0.5). The point handed to
 * `objective` is valid only during the call: the minimiser reuses its arrays.
 */
export function nelderMead(
  objective: (x: readonly number[]) => number,
  start: readonly number[],
  options: NelderMeadOptions = {},
): Minimum {
  const dim = start.length;
  const maxEvaluations = options.maxEvaluations ?? 200 * Math.max(1, dim);
  const tolerance = options.tolerance ?? 1e-8;
  const sizeTolerance = options.sizeTolerance ?? 1e-3;
  let evaluations = 0;
  const evaluate = (x: readonly number[]): number => {
    evaluations++;
    return safe(objective(x));
  };

  if (dim === 0) return { x: [], value: evaluate([]), evaluations };

  const simplex: number[][] = [start.slice()];
  for (let i = 0; i < dim; i++) {
    const vertex = start.slice();
    const step = options.steps?.[i] ?? (Math.abs(start[i]) > 1e-8 ? 0.1 * Math.abs(start[i]) : 0.1);
    vertex[i] = vertex[i] + (step === 0 ? 0.1 : step);
    simplex.push(vertex);
  }
  const values = simplex.map(evaluate);
  const order = Array.from({ length: dim + 1 }, (_, i) => i);
  const centroid = new Array<number>(dim).fill(0);
  // Work points; an accepted one swaps places with the vertex it replaces, so no step allocates.
  let trial = new Array<number>(dim).fill(0);
  let second = new Array<number>(dim).fill(0);
  const accept = (point: number[], value: number, worst: number): number[] => {
    const replaced = simplex[worst];
    simplex[worst] = point;
    values[worst] = value;
    return replaced;
  };

  const pointTowards = (out: number[], from: readonly number[], coefficient: number): void => {
    // out = centroid + coefficient * (centroid - from)
    for (let j = 0; j < dim; j++) out[j] = centroid[j] + coefficient * (centroid[j] - from[j]);
  };

  while (evaluations < maxEvaluations) {
    sortOrder(order, values);
    const best = order[0];
    const worst = order[dim];
    const secondWorst = order[dim - 1];
    const spread = values[worst] - values[best];
    // Equal values at distant vertices (a symmetric valley) are not convergence.
    if (spread <= tolerance * (Math.abs(values[best]) + tolerance) && diameter(simplex, best) <= sizeTolerance) break;

    centroid.fill(0);
    for (let k = 0; k < dim; k++) {
      const vertex = simplex[order[k]];
      for (let j = 0; j < dim; j++) centroid[j] += vertex[j] / dim;
    }
    const worstVertex = simplex[worst];
    pointTowards(trial, worstVertex, 1);
    const reflected = evaluate(trial);

    if (reflected < values[best]) {
      pointTowards(second, worstVertex, 2);
      const expanded = evaluate(second);
      if (expanded < reflected) second = accept(second, expanded, worst);
      else trial = accept(trial, reflected, worst);
      continue;
    }
    if (reflected < values[secondWorst]) {
      trial = accept(trial, reflected, worst);
      continue;
    }
    const outside = reflected < values[worst];
    pointTowards(second, worstVertex, outside ? 0.5 : -0.5);
    const contracted = evaluate(second);
    if (contracted < (outside ? reflected : values[worst])) {
      second = accept(second, contracted, worst);
      continue;
    }
    const bestVertex = simplex[best];
    for (let k = 1; k <= dim; k++) {
      const index = order[k];
      const vertex = simplex[index];
      for (let j = 0; j < dim; j++) vertex[j] = bestVertex[j] + 0.5 * (vertex[j] - bestVertex[j]);
      values[index] = evaluate(vertex);
    }
  }

  let bestIndex = 0;
  for (let k = 1; k <= dim; k++) if (values[k] < values[bestIndex]) bestIndex = k;
  return { x: simplex[bestIndex].slice(), value: values[bestIndex], evaluations };
}

/**
 * Golden-section search for a minimum of a unimodal function on [lower, upper];
 * used where only one smoothing constant is free.
 */
export function goldenSection(
  objective: (x: number) => number,
  lower: number,
  upper: number,
  tolerance = 1e-5,
): { x: number; value: number } {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let a = lower;
  let b = upper;
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let fc = safe(objective(c));
  let fd = safe(objective(d));
  while (b - a > tolerance) {
    if (fc <= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = safe(objective(c));
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = safe(objective(d));
    }
  }
  return fc <= fd ? { x: c, value: fc } : { x: d, value: fd };
}
