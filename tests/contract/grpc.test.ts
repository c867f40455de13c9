import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { startSystem, type TestSystem } from '../support/system';

const PROTOS = fileURLToPath(new URL('../../protos/', import.meta.url));

type Unary = (req: object, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: any) => void) => void;

/** Loads a service the way a caller in another codebase would: from the .proto alone. */
function loadService(file: string, pkg: string[], service: string, address: string): Record<string, Unary> & grpc.Client {
  const def = protoLoader.loadSync(file, { includeDirs: [PROTOS], keepCase: true, longs: Number, enums: String, defaults: true });
  let node: any = grpc.loadPackageDefinition(def);
  for (const p of pkg) node = node[p];
  return new node[service](address, grpc.credentials.createInsecure());
}

const call = (client: Record<string, Unary>, method: string, req: object, md: grpc.Metadata) =>
  new Promise<any>((resolve, reject) => client[method]!(req, md, (err, res) => (err ? reject(err) : resolve(res))));

describe('gRPC services from the .proto files alone (@grpc/proto-loader)', function () {
  let sys: TestSystem;
  const md = (withCredential: boolean, tenant = 'demo') => {
    const m = new grpc.Metadata();
    if (withCredential) m.set('x-service-credential', sys.config.serviceCredential);
    m.set('x-tenant', tenant);
    m.set('x-request-id', 'proto-loader-test');
    m.set('x-principal', JSON.stringify({ tenant, tokenId: 0, userId: 0, scopes: [], isAdmin: false }));
    return m;
  };
  before(async () => {
    sys = await startSystem();
  });
  after(() => sys?.stop());

  const cases: Array<[string, string, string[], string, string, object, (res: any) => void]> = [
    [
      'tokens',
      'supply/tokens/v1/tokens.proto',
      ['supply', 'tokens', 'v1'],
      'TokenService',
      'GetTenant',
      { slug: 'demo' },
      (r) => assert.equal(r.public_api_enabled, true),
    ],
    [
      'reference',
      'supply/reference/v1/reference.proto',
      ['supply', 'reference', 'v1'],
      'ReferenceService',
      'ListUoms',
      { page: { page: 1, per_page: 10 } },
      (r) => assert.equal(r.page.total, 3),
    ],
    [
      'transactional',
      'supply/transactional/v1/transactional.proto',
      ['supply', 'transactional', 'v1'],
      'TransactionalService',
      'ListSales',
      { after_id: 0, limit: 10 },
      (r) => assert.ok(Array.isArray(r.records)),
    ],
    [
      'compute',
      'supply/compute/v1/compute.proto',
      ['supply', 'compute', 'v1'],
      'ComputeService',
      'ListModelRuns',
      { limit: 5 },
      (r) => assert.ok(Array.isArray(r.runs)),
    ],
    [
      'workflows',
      'supply/workflows/v1/workflows.proto',
      ['supply', 'workflows', 'v1'],
      'WorkflowService',
      'GetJob',
      { job_id: 999999 },
      () => assert.fail('unknown job must be NOT_FOUND'),
    ],
  ];

  for (const [name, file, pkg, service, method, req, check] of cases) {
    it(`${name}: ${method} answers an authenticated internal caller and refuses one without credential`, async () => {
      const client = loadService(file, pkg, service, sys.config.peers[name as keyof typeof sys.config.peers]);
      try {
        if (name === 'workflows') {
          await assert.rejects(call(client, method, req, md(true)), (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND);
        } else {
          check(await call(client, method, req, md(true)));
        }
        await assert.rejects(call(client, method, req, md(false)), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
      } finally {
        client.close();
      }
    });
  }

  it('reports each service SERVING over grpc.health.v1', async () => {
    for (const [name, fqn] of [
      ['tokens', 'supply.tokens.v1.TokenService'],
      ['workflows', 'supply.workflows.v1.WorkflowService'],
    ] as const) {
      const health = loadService('grpc/health/v1/health.proto', ['grpc', 'health', 'v1'], 'Health', sys.config.peers[name]);
      const res = await call(health, 'Check', { service: fqn }, new grpc.Metadata());
      assert.equal(res.status, 'SERVING');
      health.close();
    }
  });

  it('keeps tenants apart: the tenant comes from metadata, not the request', async () => {
    const client = loadService(
      'supply/reference/v1/reference.proto',
      ['supply', 'reference', 'v1'],
      'ReferenceService',
      sys.config.peers.reference,
    );
    const res = await call(client, 'ListUoms', { page: { page: 1, per_page: 10 } }, md(true, 'nobody'));
    assert.equal(res.page.total, 0);
    client.close();
  });
});
