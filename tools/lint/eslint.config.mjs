// The project's lint: typescript-eslint's recommended rules, and the import boundaries of
// docs/architecture.md. Run from the repository root with `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import that climbs out of its package into another one's sources. */
const INTO_ANOTHER_PACKAGE = {
  regex: '^(\\.\\./)+([\\w-]+/)*src(/|$)',
  message: "Import another package through its entry ('@supply/<name>'), never through its files.",
};
const SERVICES = ['tokens', 'reference', 'transactional', 'compute', 'workflows'];

/** Lets a file import only these project packages (and its own relative files). */
function mayImport(allowed, why) {
  return {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { regex: `^@supply/(?!(${allowed.join('|') || '$^'})$)`, message: why },
          { regex: '^@supply/[^/]+/', message: "Import a package through its entry ('@supply/<name>'), never its files." },
          INTO_ANOTHER_PACKAGE,
        ],
      },
    ],
  };
}

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'build/**',
      'services/contracts/src/gen/**',
      'clients/typescript/src/schema.ts',
      'tools/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        structuredClone: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        FormData: 'readonly',
        Blob: 'readonly',
        File: 'readonly',
        document: 'readonly',
        window: 'readonly',
        describe: 'readonly',
        it: 'readonly',
        before: 'readonly',
        after: 'readonly',
        beforeEach: 'readonly',
        afterEach: 'readonly',
      },
    },
    rules: {
      // TypeScript checks these itself, with the project's settings (noUnusedLocals).
      'no-undef': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Pages' scripts run in the browser; uPlot is the chart library the explorer page loads before them.
    files: ['gateway/src/web/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        document: 'readonly',
        window: 'readonly',
        navigator: 'readonly',
        uPlot: 'readonly',
        location: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: { 'no-undef': 'error' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Tests read untyped JSON answers; `any` there is the honest type.
  { files: ['**/*.test.ts', 'tests/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  // Who may import whom (docs/architecture.md). Tests may use any package's entry.
  { files: ['services/contracts/src/**/*.ts'], ignores: ['**/*.test.ts'], rules: mayImport([], 'The contracts import libraries only.') },
  {
    files: ['services/kit/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: mayImport(['contracts'], 'The kit imports the contracts and libraries only.'),
  },
  ...SERVICES.map((service) => ({
    files: [`services/${service}/src/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: mayImport(
      ['kit', 'contracts'],
      'A service imports the kit, the contracts and itself: reach another service over gRPC or the bus.',
    ),
  })),
  {
    files: ['services/compute/src/engines/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^@supply/', message: 'The engines are pure calculation: they import nothing of the project.' },
            { regex: '^\\.\\./\\.\\./', message: 'The engines are pure calculation: they import nothing of the project.' },
          ],
        },
      ],
    },
  },
  {
    files: ['gateway/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: mayImport(['kit', 'contracts'], 'The gateway imports the kit and the contracts: it reaches services over gRPC.'),
  },
  { files: ['gateway/scripts/**/*.ts'], rules: mayImport(['gateway'], "The gateway's scripts use the gateway's entry.") },
  {
    files: ['services/runner/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: mayImport(['kit', 'contracts', 'gateway', ...SERVICES], 'The runner imports the service modules and the kit.'),
  },
  {
    files: ['**/*.test.ts', 'tests/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^@supply/[^/]+/', message: "Tests use a package's entry, never its files." }, INTO_ANOTHER_PACKAGE] },
      ],
    },
  },
);
