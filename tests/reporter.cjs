// Spec output plus the one closing line CI reads: `tests: N passed, N failed, N skipped`.
const Mocha = require('mocha');
const { EVENT_RUN_END } = Mocha.Runner.constants;

class CiReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      // Registered after Spec's own epilogue listener, so this is the last line of the run.
      console.log(`tests: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped`);
    });
  }
}
module.exports = CiReporter;
