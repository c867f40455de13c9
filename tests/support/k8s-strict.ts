import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { K8sObject } from './pod-security';

/** The module whose TypeScript interfaces describe an apiVersion (kubernetes-models, generated from the OpenAPI schemas). */
function typesModule(apiVersion: string): string {
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

/**
 * Fields the Kubernetes types do not know, and values of the wrong type, in each object: the
 * JSON schema validators accept unknown fields (the API server drops them silently), so the
 * objects are type-checked as object literals, where TypeScript rejects any excess property
 * at any depth. Returns the compiler's complaints, empty when every object is exact.
 */
export function strictTypeErrors(docs: K8sObject[], repoRoot = process.cwd()): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-strict-'));
  try {
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const lines = docs.map(
      (d, i) =>
        `// ${d.kind} ${d.metadata.name}\nexport const o${i}: import('${typesModule(d.apiVersion)}').I${d.kind} = ${JSON.stringify(d, null, 1)};`,
    );
    writeFileSync(join(dir, 'objects.ts'), `${lines.join('\n')}\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'ESNext',
          moduleResolution: 'Bundler',
          target: 'ES2022',
          skipLibCheck: true,
          types: [],
        },
        files: ['objects.ts'],
      }),
    );
    const r = spawnSync(join(repoRoot, 'node_modules/.bin/tsc'), ['-p', dir, '--pretty', 'false'], { encoding: 'utf8' });
    if (r.status === 0) return [];
    return `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('error TS'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
