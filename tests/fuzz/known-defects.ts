/**
 * Known-open defects the fuzz suite does not assert on yet. Each entry names the class it
 * excuses as narrowly as the request allows; remove it when the fix lands. Nothing else in
 * the suite excuses a failure.
 */
import type { FuzzRequest, FuzzResponse } from './support/http';
import type { Operation } from './support/openapi';

export interface KnownDefect {
  id: string;
  /** The failure as the issue reports it. */
  what: string;
  /** Requests not sent at all while the defect is open, because they stall or exhaust the process under test. */
  withholds?(op: Operation, req: FuzzRequest): boolean;
  /** Whether this violation of this answer is the known defect (and so not a failure yet). */
  excuses?(op: Operation, req: FuzzRequest, res: FuzzResponse, violation: string): boolean;
}

/** Deepest nesting of arrays and objects in a JSON text (strings skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}

export const KNOWN_DEFECTS: KnownDefect[] = [];

/** The known defect that withholds this request, if any. */
export function withheldBy(op: Operation, req: FuzzRequest): KnownDefect | undefined {
  return KNOWN_DEFECTS.find((d) => d.withholds?.(op, req));
}

/** Splits violations into those a known defect excuses (with its id) and the rest. */
export function triage(
  op: Operation,
  req: FuzzRequest,
  res: FuzzResponse,
  violations: string[],
): { failures: string[]; excusedBy: string[] } {
  const failures: string[] = [];
  const excusedBy: string[] = [];
  for (const v of violations) {
    const defect = KNOWN_DEFECTS.find((d) => d.excuses?.(op, req, res, v));
    if (defect) excusedBy.push(defect.id);
    else failures.push(v);
  }
  return { failures, excusedBy };
}
