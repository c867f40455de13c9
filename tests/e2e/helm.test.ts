import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NAMES } from '@supply/kit/config/config';

const CHART = 'deploy/helm/supply-planning';
const helm = [process.env.HELM_BIN, join(homedir(), 'go/bin/helm')].find((p) => p && existsSync(p));

/** helm template output as objects (the chart emits JSON-compatible YAML only where we read it). */
function renderedDocs(args: string[]): string[] {
  const out = execFileSync(helm!, ['template', 'rel', CHART, ...args], { encoding: 'utf8' });
  return out.split(/^---$/m).map((d) => d.trim()).filter(Boolean);
}

describe('Helm chart', function () {
  before(function () {
    if (!helm) this.skip(); // helm not built here: set HELM_BIN (.ci/run builds and caches it)
  });

  it('lints clean', () => {
    const out = execFileSync(helm!, ['lint', CHART], { encoding: 'utf8' });
    assert.match(out, /0 chart\(s\) failed/);
  });

  it('renders one Deployment and Service per target, each service on its configured port', () => {
    const docs = renderedDocs(['--set', 'grpcBasePort=6000']);
    const deployments = docs.filter((d) => /^kind: Deployment$/m.test(d));
    assert.equal(deployments.length, SERVICE_NAMES.length + 1);
    for (const [i, name] of SERVICE_NAMES.entries()) {
      const doc = deployments.find((d) => d.includes(`name: rel-supply-planning-${name}\n`));
      assert.ok(doc, `deployment for ${name}`);
      assert.ok(doc.includes(`args: ["--target=${name}"]`));
      assert.ok(doc.includes(`containerPort: ${6000 + i}`), `${name} listens on base+${i}`);
      assert.ok(doc.includes('grpc: { port: ' + (6000 + i) + ' }'), `${name} probed over grpc.health.v1`);
      assert.ok(doc.includes('secretKeyRef: { name: rel-supply-planning-secrets, key: SERVICE_CREDENTIAL }'));
      assert.ok(docs.some((d) => /^kind: Service$/m.test(d) && d.includes(`port: ${6000 + i}`)));
    }
    const gateway = deployments.find((d) => d.includes('--target=gateway'))!;
    assert.ok(gateway.includes('path: /readyz'));
    assert.ok(gateway.includes(`value: "rel-supply-planning-workflows:6004"`));
  });

  it('keeps secrets out of values unless given, and uses an existing Secret when named', () => {
    const generated = renderedDocs([]).find((d) => /^kind: Secret$/m.test(d))!;
    assert.match(generated, /SERVICE_CREDENTIAL: "[A-Za-z0-9+/=]{40,}"/);
    const external = renderedDocs(['--set', 'secrets.existingSecret=mine']);
    assert.ok(!external.some((d) => /^kind: Secret$/m.test(d)));
    assert.ok(external.some((d) => d.includes('secretKeyRef: { name: mine, key: SERVICE_CREDENTIAL }')));
  });
});
