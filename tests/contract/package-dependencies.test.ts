/**
 * Each workspace package's `package.json` names, as `dependencies`, exactly the project packages
 * its own (non-test) code imports; a project package only its tests use is a devDependency. The
 * lint enforces who may import whom; this keeps the manifests saying the same thing.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PROJECT_IMPORT = /\bfrom\s+'(@supply\/[a-z-]+)'|\bimport\(\s*'(@supply\/[a-z-]+)'\s*\)/g;

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'gen') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Project packages imported by the package's non-test code, itself excluded. */
function importedProjectPackages(dir: string, self: string): Set<string> {
  const found = new Set<string>();
  for (const file of sourceFiles(dir)) {
    for (const match of readFileSync(file, 'utf8').matchAll(PROJECT_IMPORT)) {
      const name = match[1] ?? match[2]!;
      if (name !== self) found.add(name);
    }
  }
  return found;
}

describe('package manifests', () => {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  // The test suites and the generated client are not shipped; their manifests may name anything they use.
  const shipped = root.workspaces.filter((ws) => ws.startsWith('services/') || ws === 'gateway');

  it('covers every shipped package', () => {
    assert.ok(shipped.length >= 8, `found ${shipped.join(', ')}`);
  });

  for (const ws of shipped) {
    it(`${ws}: dependencies name exactly the project packages its code imports`, () => {
      const manifest = JSON.parse(readFileSync(join(ROOT, ws, 'package.json'), 'utf8')) as Manifest;
      const declared = Object.keys(manifest.dependencies ?? {})
        .filter((d) => d.startsWith('@supply/'))
        .sort();
      const imported = [...importedProjectPackages(join(ROOT, ws), manifest.name)].sort();
      assert.deepEqual(declared, imported, `${manifest.name}: package.json dependencies against the imports of its non-test code`);
    });
  }
});
