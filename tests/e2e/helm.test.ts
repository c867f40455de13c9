import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as k8s from 'kubernetes-models';
import * as promOperator from '@kubernetes-models/prometheus-operator';
import { SERVICE_NAMES } from '@supply/kit';
import { strictTypeErrors } from '../support/k8s-strict';
import { restrictedViolations, type K8sObject } from '../support/pod-security';
import { skipUnless } from '../support/require';

const CHART = 'deploy/helm/supply-planning';
const PRODUCTION = 'deploy/helm/examples/production.yaml';
const helm = [process.env.HELM_BIN, join(homedir(), 'go/bin/helm')].find((p) => p && existsSync(p));
/** kube-score (github.com/zegl/kube-score), the operator's linter: .ci/run builds and caches it. */
const kubeScore = [process.env.KUBE_SCORE_BIN, join(homedir(), 'go/bin/kube-score')].find((p) => p && existsSync(p));
// The preStop sleep action needs 1.30; `helm template` assumes an old cluster unless told.
const KUBE = ['--kube-version', '1.31.0'];
const BACKENDS = [
  '--set',
  'backends.mongodbUrl=mongodb://mongo:27017/',
  '--set',
  'backends.amqpUrl=amqp://u:p@rabbitmq:5672',
  '--set',
  'backends.redisUrl=redis://redis:6379',
];
const DISTRIBUTED = ['--set', 'mode=distributed', ...BACKENDS];

/** Every value set the chart must render: both modes, their options, and the production example. */
const SCENARIOS: Record<string, string[]> = {
  'allInOne (defaults)': [],
  'allInOne on real backends, scaled, with ingress': [
    ...BACKENDS,
    '--set',
    'allInOne.persistence.enabled=false',
    '--set',
    'allInOne.autoscaling.enabled=true',
    '--set',
    'ingress.enabled=true',
  ],
  distributed: DISTRIBUTED,
  'distributed with TLS, HPA and ServiceMonitor': [
    ...DISTRIBUTED,
    '--set',
    'grpc.tls.enabled=true',
    '--set',
    'grpc.tls.secretName=grpc-tls',
    '--set',
    'gateway.autoscaling.enabled=true',
    '--set',
    'metrics.serviceMonitor.enabled=true',
  ],
  'production example': ['-f', PRODUCTION],
};

function helmRun(args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(helm!, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

function renderText(args: string[]): string {
  return execFileSync(helm!, ['template', 'rel', CHART, ...KUBE, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function render(args: string[], text = renderText(args)): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((d): d is K8sObject => d !== null);
}

const ofKind = (docs: K8sObject[], kind: string) => docs.filter((d) => d.kind === kind);
const named = (docs: K8sObject[], kind: string, name: string) => {
  const found = docs.find((d) => d.kind === kind && d.metadata.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found as K8sObject & { spec: any; data?: Record<string, string> };
};

/** The kubernetes-models class for an object's apiVersion and kind (its JSON schema validator). */
function modelFor(apiVersion: string, kind: string): (new (data: object) => { validate(): void }) | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group === 'monitoring.coreos.com') return (promOperator.monitoringCoreosCom as any)[version!]?.[kind];
  const key = group === '' ? 'v1' : group!.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase()).replace(/\./g, '');
  const ns = (k8s as any)[group === '' ? 'v1' : key];
  return group === '' ? ns?.[kind] : ns?.[version!]?.[kind];
}

describe('Helm chart', function () {
  this.timeout(60_000);
  before(function () {
    // .ci/run builds and caches helm, and sets REQUIRE_HELM=1: then a missing helm fails instead.
    skipUnless(this, 'HELM', helm ? null : 'helm is not built here (set HELM_BIN)');
  });

  for (const [name, args] of Object.entries(SCENARIOS)) {
    describe(name, () => {
      let text: string;
      let docs: K8sObject[];
      before(() => {
        text = renderText(args);
        docs = render(args, text);
      });

      it('lints clean with --strict', () => {
        const { ok, out } = helmRun(['lint', '--strict', CHART, ...args]);
        assert.ok(ok, out);
        assert.match(out, /0 chart\(s\) failed/);
      });

      it('renders only objects valid against the Kubernetes schemas', () => {
        assert.ok(docs.length > 5);
        for (const doc of docs) {
          const Model = modelFor(doc.apiVersion, doc.kind);
          assert.ok(Model, `no schema for ${doc.apiVersion} ${doc.kind}`);
          assert.doesNotThrow(() => new Model(doc).validate(), `${doc.kind} ${doc.metadata.name}`);
        }
        assert.deepEqual(strictTypeErrors(docs), [], 'no field unknown to Kubernetes, none of the wrong type');
      });

      it('scores clean with kube-score: nothing critical, no warning', function () {
        skipUnless(this, 'KUBE_SCORE', kubeScore ? null : 'kube-score is not built here (set KUBE_SCORE_BIN)');
        const r = spawnSync(kubeScore!, ['score', '-', '--output-format', 'ci'], { input: text, encoding: 'utf8' });
        const findings = `${r.stdout}${r.stderr}`.split('\n').filter((line) => /^\[(CRITICAL|WARNING)\]/.test(line));
        assert.deepEqual(findings, []);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /\[OK\]/, 'kube-score scored the objects');
      });

      it("names the release's namespace on every object, so none lands in another by accident", () => {
        const inNamespace = render(['--namespace', 'supply', ...args]);
        for (const doc of inNamespace) assert.equal(doc.metadata.namespace, 'supply', `${doc.kind} ${doc.metadata.name}`);
      });

      it('passes Pod Security "restricted" and keeps the root filesystem read-only', () => {
        const workloads = ofKind(docs, 'Deployment');
        assert.ok(workloads.length >= 1);
        for (const d of workloads) assert.deepEqual(restrictedViolations(d), [], d.metadata.name);
      });

      it('gives every Deployment requests, limits, probes, a PDB and a termination budget above its drain', () => {
        const config = ofKind(docs, 'ConfigMap')[0] as any;
        const drainSeconds = Number(config.data.SHUTDOWN_TIMEOUT_MS) / 1000;
        for (const d of ofKind(docs, 'Deployment') as any[]) {
          const pod = d.spec.template.spec;
          const [c] = pod.containers;
          assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory, d.metadata.name);
          assert.ok(c.startupProbe && c.livenessProbe && c.readinessProbe, d.metadata.name);
          assert.notDeepEqual(c.livenessProbe, c.readinessProbe, 'liveness is not readiness');
          const preStop = c.lifecycle?.preStop?.sleep?.seconds ?? 0;
          assert.ok(preStop + drainSeconds < pod.terminationGracePeriodSeconds, d.metadata.name);
          assert.equal(pod.automountServiceAccountToken, false);
          assert.ok(d.spec.template.metadata.annotations['checksum/config']);
          const pdb = ofKind(docs, 'PodDisruptionBudget').find((p: any) => p.metadata.name === d.metadata.name) as any;
          assert.deepEqual(pdb?.spec.selector.matchLabels, d.spec.selector.matchLabels, `PDB of ${d.metadata.name}`);
          assert.ok(c.ports.some((p: any) => p.name === 'metrics' && p.containerPort === 9464));
        }
        for (const sa of ofKind(docs, 'ServiceAccount') as any[]) assert.equal(sa.automountServiceAccountToken, false);
      });
    });
  }

  describe('distributed mode', () => {
    let docs: K8sObject[];
    before(() => {
      docs = render([...DISTRIBUTED, '--set', 'grpc.basePort=6000', '--set', 'backends.mongodbUrls.compute=mongodb://compute-db:27017/']);
    });

    it('runs one Deployment per target with liveness apart from readiness, and startup probes', () => {
      assert.equal(ofKind(docs, 'Deployment').length, SERVICE_NAMES.length + 1);
      for (const [i, name] of SERVICE_NAMES.entries()) {
        const c = named(docs, 'Deployment', `rel-supply-planning-${name}`).spec.template.spec.containers[0];
        assert.deepEqual(c.args, [`--target=${name}`]);
        assert.deepEqual(c.ports[0], { name: 'grpc', containerPort: 6000 + i });
        // Native gRPC probes: `liveness` ignores dependencies; "" is the service's readiness.
        assert.deepEqual(c.livenessProbe.grpc, { port: 6000 + i, service: 'liveness' });
        assert.deepEqual(c.startupProbe.grpc, { port: 6000 + i, service: 'liveness' });
        assert.deepEqual(c.readinessProbe.grpc, { port: 6000 + i });
      }
      const gw = named(docs, 'Deployment', 'rel-supply-planning-gateway').spec.template.spec.containers[0];
      assert.equal(gw.livenessProbe.httpGet.path, '/healthz');
      assert.equal(gw.readinessProbe.httpGet.path, '/readyz');
      assert.equal(gw.startupProbe.httpGet.path, '/healthz');
    });

    it('reaches services through headless Services with dns:/// and round_robin', () => {
      const config = named(docs, 'ConfigMap', 'rel-supply-planning-config').data!;
      assert.equal(config.GRPC_LB_POLICY, 'round_robin');
      assert.equal(config.GRPC_HOST, '0.0.0.0');
      for (const [i, name] of SERVICE_NAMES.entries()) {
        assert.equal(config[`${name.toUpperCase()}_ADDR`], `dns:///rel-supply-planning-${name}:${6000 + i}`);
        const svc = named(docs, 'Service', `rel-supply-planning-${name}`);
        assert.equal(svc.spec.clusterIP, 'None');
        assert.deepEqual(
          svc.spec.ports.map((p: any) => p.name),
          ['grpc', 'metrics'],
        );
      }
    });

    it('takes every credential and backend URL from the Secret, a MongoDB URL per service', () => {
      const secret = named(docs, 'Secret', 'rel-supply-planning-secrets').data!;
      const decoded = (key: string) => Buffer.from(secret[key]!, 'base64').toString();
      assert.equal(decoded('MONGODB_URL_COMPUTE'), 'mongodb://compute-db:27017/');
      assert.equal(decoded('MONGODB_URL_TOKENS'), 'mongodb://mongo:27017/');
      const config = named(docs, 'ConfigMap', 'rel-supply-planning-config').data!;
      assert.ok(!Object.values(config).some((v) => /mongodb:|amqp:|redis:/.test(v)), 'no backend URL in plain config');
      assert.equal(config.MONGODB_DATABASE_PREFIX, 'supply', 'each service database is <prefix>_<service>');
      for (const name of SERVICE_NAMES) {
        const env = named(docs, 'Deployment', `rel-supply-planning-${name}`).spec.template.spec.containers[0].env;
        const mongo = env.find((e: any) => e.name === 'MONGODB_URL');
        assert.deepEqual(mongo.valueFrom.secretKeyRef, { name: 'rel-supply-planning-secrets', key: `MONGODB_URL_${name.toUpperCase()}` });
        assert.ok(env.every((e: any) => e.value === undefined || !/:\/\//.test(e.value)));
      }
      const gwEnv = named(docs, 'Deployment', 'rel-supply-planning-gateway').spec.template.spec.containers[0].env;
      assert.ok(!gwEnv.some((e: any) => e.name === 'MONGODB_URL'), 'the gateway owns no database');
    });

    it('lets gRPC in only from the release, and metrics only from the monitoring namespace', () => {
      for (const name of SERVICE_NAMES) {
        const np = named(docs, 'NetworkPolicy', `rel-supply-planning-${name}`);
        const grpc = np.spec.ingress.find((r: any) => r.ports[0].port === 'grpc');
        assert.deepEqual(grpc.from, [
          { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/name': 'supply-planning' } } },
        ]);
        const metrics = np.spec.ingress.find((r: any) => r.ports[0].port === 'metrics');
        assert.deepEqual(metrics.from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
      }
    });

    it('lets pods out to DNS and the release always, and elsewhere as networkPolicy.egress says', () => {
      const release = {
        podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/name': 'supply-planning' } },
      };
      const dns = {
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      };
      for (const name of ['gateway', ...SERVICE_NAMES]) {
        const np = named(docs, 'NetworkPolicy', `rel-supply-planning-${name}`);
        assert.deepEqual(np.spec.policyTypes, ['Ingress', 'Egress']);
        assert.deepEqual(np.spec.egress, [{ to: [release] }, dns, {}], 'by default anywhere: the backends may live anywhere');
      }
      const mongo = { to: [{ ipBlock: { cidr: '10.20.0.0/16' } }], ports: [{ port: 27017, protocol: 'TCP' }] };
      const confined = render([...DISTRIBUTED, '--set-json', `networkPolicy.egress=${JSON.stringify([mongo])}`]);
      assert.deepEqual(named(confined, 'NetworkPolicy', 'rel-supply-planning-tokens').spec.egress, [{ to: [release] }, dns, mongo]);
    });

    it('rolls pods when configuration changes, and not otherwise', () => {
      const checksum = (d: K8sObject[]) =>
        (named(d, 'Deployment', 'rel-supply-planning-tokens').spec.template.metadata.annotations as any)['checksum/config'];
      const again = render([
        ...DISTRIBUTED,
        '--set',
        'grpc.basePort=6000',
        '--set',
        'backends.mongodbUrls.compute=mongodb://compute-db:27017/',
      ]);
      assert.equal(checksum(again), checksum(docs));
      const changed = render([...DISTRIBUTED, '--set', 'grpc.basePort=6000', '--set', 'config.logLevel=debug']);
      assert.notEqual(checksum(changed), checksum(docs));
    });

    it('with internal TLS mounts the certificates, points the kit at them and probes a plaintext health port', () => {
      const tls = render([
        ...DISTRIBUTED,
        '--set',
        'grpc.tls.enabled=true',
        '--set',
        'grpc.tls.secretName=grpc-tls',
        '--set',
        'grpc.tls.serverName=supply.internal',
      ]);
      const config = named(tls, 'ConfigMap', 'rel-supply-planning-config').data!;
      assert.equal(config.GRPC_TLS_CERT, '/etc/supply/grpc-tls/tls.crt');
      assert.equal(config.GRPC_TLS_CA, '/etc/supply/grpc-tls/ca.crt');
      assert.equal(config.GRPC_TLS_SERVER_NAME, 'supply.internal');
      assert.equal(config.GRPC_HEALTH_PORT, '50060');
      for (const name of ['gateway', ...SERVICE_NAMES]) {
        const pod = named(tls, 'Deployment', `rel-supply-planning-${name}`).spec.template.spec;
        assert.deepEqual(pod.volumes.find((v: any) => v.name === 'grpc-tls').secret.secretName, 'grpc-tls');
        assert.ok(pod.containers[0].volumeMounts.some((m: any) => m.name === 'grpc-tls' && m.readOnly));
        if (name !== 'gateway') assert.equal(pod.containers[0].livenessProbe.grpc.port, 50060);
      }
    });

    it('uses an existing Secret when named, and then makes none', () => {
      const docs2 = render(['--set', 'mode=distributed', '--set', 'secrets.existingSecret=mine']);
      assert.equal(ofKind(docs2, 'Secret').length, 0);
      const env = named(docs2, 'Deployment', 'rel-supply-planning-reference').spec.template.spec.containers[0].env;
      assert.deepEqual(env.find((e: any) => e.name === 'SERVICE_CREDENTIAL').valueFrom.secretKeyRef, {
        name: 'mine',
        key: 'SERVICE_CREDENTIAL',
      });
      assert.deepEqual(env.find((e: any) => e.name === 'MONGODB_URL').valueFrom.secretKeyRef, {
        name: 'mine',
        key: 'MONGODB_URL_REFERENCE',
      });
    });

    it('generates the service credential and cursor key when not given', () => {
      const secret = named(docs, 'Secret', 'rel-supply-planning-secrets').data!;
      for (const key of ['SERVICE_CREDENTIAL', 'CURSOR_SECRET']) assert.ok(Buffer.from(secret[key]!, 'base64').toString().length >= 32);
    });
  });

  describe('allInOne mode', () => {
    it('runs one process with gRPC on loopback, its data on a kept volume, one replica at a time', () => {
      const docs = render([]);
      assert.deepEqual(
        ofKind(docs, 'Deployment').map((d) => d.metadata.name),
        ['rel-supply-planning-all-in-one'],
      );
      const d = named(docs, 'Deployment', 'rel-supply-planning-all-in-one');
      assert.equal(d.spec.replicas, 1);
      assert.equal(d.spec.strategy.type, 'Recreate');
      assert.deepEqual(d.spec.template.spec.containers[0].args, ['--target=all']);
      assert.equal(named(docs, 'ConfigMap', 'rel-supply-planning-config').data!.GRPC_HOST, '127.0.0.1');
      const pvc = named(docs, 'PersistentVolumeClaim', 'rel-supply-planning-data');
      assert.equal((pvc.metadata as any).annotations['helm.sh/resource-policy'], 'keep');
      assert.deepEqual(d.spec.template.spec.volumes.find((v: any) => v.name === 'data').persistentVolumeClaim, {
        claimName: 'rel-supply-planning-data',
      });
      assert.deepEqual(
        ofKind(docs, 'Service').map((s: any) => s.spec.ports.map((p: any) => p.name)),
        [['http', 'metrics']],
      );
    });
  });

  describe('refuses bad values', () => {
    const refused = (args: string[], message: RegExp) => {
      const { ok, out } = helmRun(['template', 'rel', CHART, ...args]);
      assert.ok(!ok, 'rendered');
      assert.match(out, message);
    };

    it('a misspelt key, at the top or nested', () => {
      refused(['--set', 'gatway.replicas=3'], /Additional property gatway is not allowed/);
      refused(['--set', 'gateway.replica=3'], /Additional property replica is not allowed/);
      refused(['--set', 'services.token.replicas=3'], /Additional property token is not allowed/);
      refused(
        ['--set', 'networkPolicy.metricsFrom[0].namespaceSelecter.matchLabels.a=b'],
        /Additional property namespaceSelecter is not allowed/,
      );
    });

    it('a wrong type or a weakened security context', () => {
      refused(['--set', 'gateway.replicas=two'], /replicas/);
      refused(['--set', 'containerSecurityContext.allowPrivilegeEscalation=true'], /allowPrivilegeEscalation/);
      refused(['--set', 'mode=both'], /mode/);
      refused(['--set', 'config.mongodbDatabasePrefix=two words'], /mongodbDatabasePrefix/);
    });

    it('distributed mode without backends, and a drain longer than the grace period', () => {
      refused(['--set', 'mode=distributed'], /distributed mode needs backends/);
      refused(['--set', 'shutdown.timeoutSeconds=60'], /below terminationGracePeriodSeconds/);
      refused(['--set', 'allInOne.replicas=2'], /runs one replica/);
    });
  });

  it('NOTES.txt tells how to reach the API and get a first token, in each mode', () => {
    // `helm template` skips NOTES.txt: render it from a copy of the chart as a named template.
    const dir = mkdtempSync(join(tmpdir(), 'chart-notes-'));
    try {
      cpSync(CHART, dir, { recursive: true });
      const notes = readFileSync(join(dir, 'templates/NOTES.txt'), 'utf8');
      rmSync(join(dir, 'templates/NOTES.txt'));
      writeFileSync(join(dir, 'templates/_notes.tpl'), `{{- define "notes" -}}\n${notes}\n{{- end -}}\n`);
      writeFileSync(
        join(dir, 'templates/notes.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: notes }\ndata:\n  notes: {{ include "notes" . | quote }}\n',
      );
      const notesOf = (args: string[]) => {
        const out = execFileSync(helm!, ['template', 'rel', dir, '--show-only', 'templates/notes.yaml', ...args], { encoding: 'utf8' });
        return (parseAllDocuments(out)[0]!.toJS() as { data: { notes: string } }).data.notes;
      };
      const allInOne = notesOf([]);
      assert.match(allInOne, /port-forward svc\/rel-supply-planning-all-in-one 8080:80/);
      assert.match(allInOne, /exec deploy\/rel-supply-planning-all-in-one -- node dist\/admin\.js/);
      assert.match(allInOne, /token create globex/);
      const production = notesOf(['-f', PRODUCTION]);
      assert.match(production, /curl -s https:\/\/supply\.example\.com\/readyz/);
      assert.match(production, /exec deploy\/rel-supply-planning-tokens -- node dist\/admin\.js/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the schema checks find a malformed object and a misspelt field', () => {
    const d = render([]).find((x) => x.kind === 'Deployment') as any;
    const Model = modelFor(d.apiVersion, d.kind)!;
    const wrongType = structuredClone(d);
    wrongType.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    assert.throws(() => new Model(wrongType).validate());
    const misspelt = structuredClone(d);
    misspelt.spec.template.spec.containers[0].readinessProbe.periodSecond = 5;
    const errors = strictTypeErrors([d, misspelt]);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0]!, /periodSecond/);
  });

  it('the restricted check finds what it looks for', () => {
    const d = render([]).find((x) => x.kind === 'Deployment') as any;
    const broken = structuredClone(d);
    broken.spec.template.spec.hostNetwork = true;
    broken.spec.template.spec.volumes.push({ name: 'h', hostPath: { path: '/' } });
    delete broken.spec.template.spec.securityContext.seccompProfile;
    delete broken.spec.template.spec.containers[0].securityContext.seccompProfile;
    broken.spec.template.spec.containers[0].securityContext.capabilities = { add: ['SYS_ADMIN'] };
    broken.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
    broken.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem = false;
    broken.spec.template.spec.containers[0].securityContext.runAsUser = 0;
    assert.deepEqual(restrictedViolations(d), []);
    assert.deepEqual(
      restrictedViolations(broken)
        .map((v) => v.split(':')[0])
        .sort(),
      [
        'allowPrivilegeEscalation',
        'capabilities',
        'capabilities',
        'hostNetwork',
        'readOnlyRootFilesystem',
        'runAsUser',
        'seccompProfile',
        'volumes',
      ],
    );
  });
});
