// Compiles the production entry points to JavaScript under dist/ with esbuild: the workspace
// packages (exported as .ts sources for tsx in development) are bundled in, every npm
// dependency stays external and is resolved from node_modules at run time.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist');

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // A production install (npm ci --omit=dev) has no compiler; it ships the dist/ built beforehand.
  if (process.argv.includes('--if-available')) {
    console.log('build: esbuild is not installed (production install); keeping dist/ as shipped');
    process.exit(0);
  }
  throw new Error('build: esbuild is missing; run npm install');
}

/** Every entry point a production command runs: `node dist/<name>.js`. */
const entryPoints = {
  main: 'services/runner/src/main.ts',
  distributed: 'services/runner/src/distributed.ts',
  admin: 'services/tokens/src/cli/admin.ts',
  ops: 'services/runner/src/ops/cli.ts',
  forecast: 'services/compute/src/engines/forecast/cli.ts',
};

const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const external = new Set();
for (const ws of rootPkg.workspaces) {
  const pkg = JSON.parse(readFileSync(join(root, ws, 'package.json'), 'utf8'));
  for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
    if (!dep.startsWith('@supply/')) external.add(dep);
  }
}

const started = Date.now();
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(Object.entries(entryPoints).map(([name, src]) => [name, join(root, src)])),
  outdir: outDir,
  bundle: true,
  // One self-contained file per entry point, so import.meta.url is always dist/<entry>.js.
  format: 'esm',
  platform: 'node',
  target: 'node22',
  sourcemap: true,
  sourcesContent: false,
  external: [...external].flatMap((d) => [d, `${d}/*`]),
  logLevel: 'warning',
  write: false,
});
// Each file is renamed into place, so a process starting meanwhile (npm start's prestart) reads a whole one.
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  const tmp = `${file.path}.${process.pid}.tmp`;
  writeFileSync(tmp, file.contents);
  renameSync(tmp, file.path);
}

// Files the code reads next to itself at run time (import.meta.url relative).
cpSync(join(root, 'gateway/src/web/assets'), join(outDir, 'assets'), { recursive: true });
// The docs page's Scalar bundle: a build-time dependency, so the image carries neither it nor its framework.
const scalarDir = dirname(createRequire(join(root, 'gateway/package.json')).resolve('@scalar/api-reference'));
cpSync(join(scalarDir, 'browser', 'standalone.js'), join(outDir, 'assets', 'scalar.js'));
const protoFiles = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'gen' || name === 'node_modules') continue;
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.proto')) protoFiles.push(path);
  }
};
walk(join(root, 'protos'));
for (const file of protoFiles) cpSync(file, join(outDir, 'protos', relative(join(root, 'protos'), file)));
if (!existsSync(join(outDir, 'main.js'))) throw new Error('build produced no dist/main.js');
console.log(`build: ${Object.keys(entryPoints).length} entry points -> dist/ in ${Date.now() - started} ms`);
