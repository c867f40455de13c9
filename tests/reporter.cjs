// Spec output, the ten slowest test files (hooks included: where a CI run's minutes go), and the
// one closing line CI reads: `tests: N passed, N failed, N skipped`.
const path = require('node:path');
const Mocha = require('mocha');
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

const SLOWEST_FILES = 10;

class CiReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const started = new Map();
    const spent = new Map();
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && suite.parent && suite.parent.root) started.set(suite, process.hrtime.bigint());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const start = started.get(suite);
      if (start === undefined) return;
      started.delete(suite);
      const file = path.relative(process.cwd(), suite.file);
      spent.set(file, (spent.get(file) ?? 0) + Number(process.hrtime.bigint() - start) / 1e9);
    });
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      const slowest = [...spent].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_FILES);
      if (slowest.length > 1) {
        console.log(`slowest files (of ${spent.size}, ${((s.duration ?? 0) / 1000).toFixed(0)} s in all):`);
        for (const [file, seconds] of slowest) console.log(`  ${seconds.toFixed(1).padStart(6)} s  ${file}`);
      }
      // Registered after Spec's own epilogue listener, so this is the last line of the run.
      console.log(`tests: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped`);
    });
  }
}
module.exports = CiReporter;
