/**
 * Tests that need a backend or tool this machine may lack (RabbitMQ, MongoDB, helm, kube-score, Chromium)
 * skip, saying why, when it is missing; CI sets REQUIRE_<WHAT>=1 once it has set the thing up,
 * and then the same test fails with the reason instead, so CI never passes by skipping what it
 * is meant to prove.
 */
export type Requirement = 'AMQP' | 'MONGODB' | 'HELM' | 'KUBE_SCORE' | 'CHROMIUM';

export function isRequired(what: Requirement): boolean {
  return process.env[`REQUIRE_${what}`] === '1';
}

function failure(what: Requirement, missing: string): Error {
  return new Error(`REQUIRE_${what}=1 but ${missing}: this run must not skip it`);
}

/**
 * In a hook or test: nothing when `missing` is empty; else skips the test (or suite, in a
 * `before`), or throws when REQUIRE_<what>=1.
 */
export function skipUnless(ctx: Mocha.Context, what: Requirement, missing: string | null | undefined): void {
  if (!missing) return;
  if (isRequired(what)) throw failure(what, missing);
  console.log(`    skipped: ${missing}`);
  ctx.skip();
}

/** Skips the test (or suite, in a `before`) and says why, for a reason no REQUIRE_ setting covers. */
export function skipBecause(ctx: Mocha.Context, reason: string): never {
  console.log(`    skipped: ${reason}`);
  return ctx.skip();
}

/** In a describe body whose tests cannot be declared without the backend: a pending test, or a failing one when REQUIRE_<what>=1. */
export function missingBackend(what: Requirement, missing: string): void {
  if (isRequired(what)) {
    it(`needs ${missing.replace(/ is not set$/, '')}`, () => {
      throw failure(what, missing);
    });
  } else {
    it.skip(`skipped: ${missing}`);
  }
}
