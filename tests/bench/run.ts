// `npm run bench [-- name ...]`: runs each benchmark script in turn; every script prints its
// own side-by-side figures and ratios measured in the same run.
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const names = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.test.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((n) => wanted.length === 0 || wanted.includes(n))
  .sort();

for (const name of names) {
  console.log(`\n=== bench: ${name} ===`);
  const mod = (await import(pathToFileURL(`${here}/${name}.ts`).href)) as { run?: () => Promise<void> };
  if (typeof mod.run !== 'function') throw new Error(`tests/bench/${name}.ts exports no run()`);
  const t0 = Date.now();
  await mod.run();
  console.log(`(${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
process.exit(0);
