// grpc.health.v1 at shutdown: an open Watch stream hears NOT_SERVING and is ended, so it does
// not hold the server's graceful shutdown until the SHUTDOWN_TIMEOUT_MS cut.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { startSystem } from '../support/system';

const PROTOS = fileURLToPath(new URL('../../protos/', import.meta.url));

describe('gRPC health at shutdown', function () {
  this.timeout(60_000);

  it('ends an open Watch with NOT_SERVING and stops well within the budget', async () => {
    const sys = await startSystem({ env: { SHUTDOWN_TIMEOUT_MS: '4000' } });
    const def = protoLoader.loadSync('grpc/health/v1/health.proto', { includeDirs: [PROTOS], keepCase: true, enums: String });
    const Health = (grpc.loadPackageDefinition(def) as any).grpc.health.v1.Health;
    const client = new Health(sys.config.peers.tokens, grpc.credentials.createInsecure());
    const seen: string[] = [];
    const stream = client.Watch({ service: '' });
    const ended = new Promise<string>((resolve) => {
      stream.on('end', () => resolve('end'));
      stream.on('error', (err: grpc.ServiceError) => resolve(`error ${err.code}`));
    });
    await new Promise<void>((resolve) => stream.on('data', (m: { status: string }) => (seen.push(m.status), resolve())));
    assert.deepEqual(seen, ['SERVING']);

    const t0 = Date.now();
    await sys.stop();
    const took = Date.now() - t0;
    assert.equal(await ended, 'end');
    assert.deepEqual(seen, ['SERVING', 'NOT_SERVING']);
    assert.ok(took < 2_000, `stopped in ${took} ms; an open watch must not wait for the 4000 ms cut`);
    client.close();
  });
});
