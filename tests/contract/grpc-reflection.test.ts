import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { startSystem, type TestSystem } from '../support/system';

// The reflection protocol's own .proto, as shipped with @grpc/reflection.
const reflectionProto = join(
  dirname(createRequire(import.meta.url).resolve('@grpc/reflection/package.json')),
  'build/proto/grpc/reflection/v1/reflection.proto',
);

/** Asks a server which services it exposes, over grpc.reflection.v1 (what grpcurl does). */
async function listServices(address: string): Promise<string[]> {
  const def = protoLoader.loadSync(reflectionProto, { keepCase: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const call = client.ServerReflectionInfo();
      call.on('data', (res: any) => {
        resolve(res.list_services_response.service.map((s: { name: string }) => s.name));
        call.end();
      });
      call.on('error', reject);
      call.write({ list_services: '' });
    });
  } finally {
    client.close();
  }
}

describe('gRPC server reflection', function () {
  let sys: TestSystem | undefined;
  afterEach(async () => {
    await sys?.stop();
    sys = undefined;
  });

  it('lists each service when GRPC_REFLECTION=1', async () => {
    sys = await startSystem({ env: { GRPC_REFLECTION: '1' } });
    assert.ok((await listServices(sys.config.peers.tokens)).includes('supply.tokens.v1.TokenService'));
    assert.ok((await listServices(sys.config.peers.workflows)).includes('supply.workflows.v1.WorkflowService'));
  });

  it('is off by default', async () => {
    sys = await startSystem();
    await assert.rejects(listServices(sys.config.peers.reference), (e: grpc.ServiceError) => e.code === grpc.status.UNIMPLEMENTED);
  });
});
