/**
 * The import boundaries hold because the lint says so: each case plants a file in a package
 * and lints it with the project's own configuration. A violation must be reported, a
 * permitted import must not.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOOLS = join(ROOT, 'tools/lint');

interface LintMessage {
  ruleId: string | null;
  message: string;
}
type Lint = (code: string, filePath: string) => Promise<LintMessage[]>;

describe('lint: import boundaries', function () {
  this.timeout(60_000);
  let lint: Lint;

  before(async function () {
    if (!existsSync(join(TOOLS, 'node_modules/eslint'))) {
      // .ci/run installs it (npm run lint); a bare `npm test` may not have.
      console.log('    (skipped: the lint toolchain is not installed; `npm run lint:tools` installs it)');
      this.skip();
    }
    const eslintEntry = createRequire(join(TOOLS, 'package.json')).resolve('eslint');
    const { ESLint } = (await import(pathToFileURL(eslintEntry).href)) as {
      ESLint: new (options: object) => {
        lintText(code: string, options: { filePath: string }): Promise<Array<{ messages: LintMessage[] }>>;
      };
    };
    const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: join(TOOLS, 'eslint.config.mjs') });
    lint = async (code, filePath) => (await eslint.lintText(code, { filePath: join(ROOT, filePath) }))[0]!.messages;
  });

  const boundary = (messages: LintMessage[]) => messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);

  const cases: Array<[string, string, string, boolean]> = [
    [
      'a service importing another service',
      'services/compute/src/planted.ts',
      "import { workflowsModule } from '@supply/workflows';\nexport const m = workflowsModule;\n",
      true,
    ],
    [
      'a service importing another service’s files by path',
      'services/compute/src/planted.ts',
      "import { x } from '../../workflows/src/jobs/fold';\nexport const m = x;\n",
      true,
    ],
    [
      'the gateway importing a service',
      'gateway/src/planted.ts',
      "import { tokensModule } from '@supply/tokens';\nexport const m = tokensModule;\n",
      true,
    ],
    [
      'the kit importing a service',
      'services/kit/src/planted.ts',
      "import { referenceModule } from '@supply/reference';\nexport const m = referenceModule;\n",
      true,
    ],
    [
      'the contracts importing the kit',
      'services/contracts/src/planted.ts',
      "import { AppError } from '@supply/kit';\nexport const m = AppError;\n",
      true,
    ],
    [
      'an engine importing the kit',
      'services/compute/src/engines/mrp/planted.ts',
      "import { AppError } from '@supply/kit';\nexport const m = AppError;\n",
      true,
    ],
    [
      'an engine importing its service',
      'services/compute/src/engines/mrp/planted.ts',
      "import { x } from '../../supply-planning/planner';\nexport const m = x;\n",
      true,
    ],
    [
      'a test importing a package’s files',
      'tests/e2e/planted.test.ts',
      "import { x } from '@supply/workflows/jobs/fold';\nexport const m = x;\n",
      true,
    ],
    [
      'a service importing the kit and the contracts',
      'services/compute/src/planted.ts',
      "import { AppError } from '@supply/kit';\nimport { queue } from '@supply/contracts';\nexport const m = [AppError, queue];\n",
      false,
    ],
    [
      'the gateway importing the kit and the contracts',
      'gateway/src/planted.ts',
      "import { AppError } from '@supply/kit';\nimport { SCOPES } from '@supply/contracts';\nexport const m = [AppError, SCOPES];\n",
      false,
    ],
    [
      'the runner importing the service modules',
      'services/runner/src/planted.ts',
      "import { computeModule } from '@supply/compute';\nexport const m = computeModule;\n",
      false,
    ],
    [
      'a test importing a service’s entry',
      'tests/e2e/planted.test.ts',
      "import { workflowsModule } from '@supply/workflows';\nexport const m = workflowsModule;\n",
      false,
    ],
  ];

  for (const [what, file, code, refused] of cases) {
    it(`${refused ? 'refuses' : 'permits'} ${what}`, async () => {
      const found = boundary(await lint(code, file));
      if (refused) assert.ok(found.length > 0, `expected a boundary error in ${file}`);
      else assert.deepEqual(found, []);
    });
  }
});
