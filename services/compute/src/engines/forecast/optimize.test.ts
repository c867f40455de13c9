import assert from 'node:assert/strict';
import { goldenSection, nelderMead } from './optimize';

describe('forecast/optimize', () => {
  it('Nelder-Mead finds the minimum of a shifted quadratic bowl', () => {
    const result = nelderMead((x) => (x[0] - 3) ** 2 + 10 * (x[1] + 1) ** 2, [0, 0], { maxEvaluations: 2000, tolerance: 1e-14 });
    assert.ok(Math.abs(result.x[0] - 3) < 1e-4);
    assert.ok(Math.abs(result.x[1] + 1) < 1e-4);
  });

  it('Nelder-Mead solves the Rosenbrock valley', () => {
    const rosenbrock = (x: readonly number[]) => 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2;
    const result = nelderMead(rosenbrock, [-1.2, 1], { maxEvaluations: 5000, tolerance: 1e-16 });
    assert.ok(result.value < 1e-8, `value ${result.value}`);
  });

  it('Nelder-Mead walks away from non-finite values and is deterministic', () => {
    const objective = (x: readonly number[]) => (x[0] < 0 ? Number.NaN : (x[0] - 2) ** 2);
    const a = nelderMead(objective, [0.5]);
    const b = nelderMead(objective, [0.5]);
    assert.deepEqual(a, b);
    assert.ok(Math.abs(a.x[0] - 2) < 1e-3);
  });

  it('golden section finds the minimum of a parabola in an interval', () => {
    const result = goldenSection((x) => (x - 0.3) ** 2, 0, 1, 1e-8);
    assert.ok(Math.abs(result.x - 0.3) < 1e-6);
  });
});
