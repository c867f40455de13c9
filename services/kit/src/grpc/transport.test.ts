import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, type ServiceDefinition } from '@grpc/grpc-js';
import pino from 'pino';
import { grpc_health_v1 } from '@supply/contracts';
import { ConfigError, loadConfig } from '../config/config';
import { createClient } from './client';
import { healthService, LIVENESS_SERVICE } from './health';
import { adaptService, bindServer } from './server';
import type { GrpcTransport } from './transport';

const json = (value: unknown) => Buffer.from(JSON.stringify(value ?? null));
const parse = (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as unknown;
const definition = {
  who: {
    path: '/kit.test.Who/Who',
    requestStream: false as const,
    responseStream: false as const,
    requestSerialize: json,
    requestDeserialize: parse,
    responseSerialize: json,
    responseDeserialize: parse,
  },
};
const credential = 'transport-test-credential';

/** A server answering with its own name, so a caller sees which one took each call. */
async function startWho(name: string, transport?: GrpcTransport): Promise<{ server: Server; port: number }> {
  const server = new Server();
  const handlers = { who: async () => ({ name }) };
  server.addService(
    definition as unknown as ServiceDefinition,
    adaptService(definition as unknown as ServiceDefinition, handlers as never, { credential, logger: pino({ level: 'silent' }) }),
  );
  const port = await bindServer(server, '127.0.0.1', 0, transport);
  return { server, port };
}

describe('gRPC transport', function () {
  this.timeout(15_000);
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.forceShutdown()));

  async function namesSeen(target: string, transport: GrpcTransport, calls = 8): Promise<Set<string>> {
    const client = createClient(definition, target, { credential, deadlineMs: 5_000, transport });
    try {
      const seen = new Set<string>();
      for (let i = 0; i < calls; i++) seen.add(((await client.who({})) as { name: string }).name);
      return seen;
    } finally {
      client.close();
    }
  }

  it('spreads calls over every resolved address with round_robin, and sticks to one with pick_first', async () => {
    const a = await startWho('a');
    const b = await startWho('b');
    servers.push(a.server, b.server);
    // One name resolving to two addresses, as a headless Service's DNS name does.
    const target = `ipv4:127.0.0.1:${a.port},127.0.0.1:${b.port}`;
    assert.deepEqual([...(await namesSeen(target, { lbPolicy: 'round_robin' }))].sort(), ['a', 'b']);
    assert.equal((await namesSeen(target, { lbPolicy: 'pick_first' })).size, 1);
  });

  it('dials a dns:/// name, as the chart gives peers', async () => {
    const a = await startWho('dns');
    servers.push(a.server);
    assert.deepEqual([...(await namesSeen(`dns:///localhost:${a.port}`, { lbPolicy: 'round_robin' }, 2))], ['dns']);
  });

  it('a peer away is unavailable, with a message naming no address or transport detail', async () => {
    const gone = await startWho('gone');
    gone.server.forceShutdown();
    const err = await namesSeen(`127.0.0.1:${gone.port}`, { lbPolicy: 'round_robin' }, 1).catch((e: Error & { code?: string }) => e);
    assert.equal((err as { code?: string }).code, 'unavailable');
    assert.equal((err as Error).message, 'A service is unavailable. Try again in a moment.');
  });

  it('a call or a client stream that finds its peer restarting waits a moment for it instead of failing (nothing was sent)', async () => {
    const streaming = {
      count: {
        path: '/kit.test.Count/Count',
        requestStream: true as const,
        responseStream: false as const,
        requestSerialize: json,
        requestDeserialize: parse,
        responseSerialize: json,
        responseDeserialize: parse,
      },
    };
    const serve = async (port: number) => {
      const server = new Server();
      const handlers = {
        count: async (requests: AsyncIterable<unknown>) => {
          let n = 0;
          for await (const _ of requests) n++;
          return { n };
        },
      };
      server.addService(
        streaming as unknown as ServiceDefinition,
        adaptService(streaming as unknown as ServiceDefinition, handlers as never, { credential, logger: pino({ level: 'silent' }) }),
      );
      const bound = await bindServer(server, '127.0.0.1', port);
      servers.push(server);
      return { server, port: bound };
    };
    const { server: before, port } = await serve(0);
    const client = createClient(streaming, `127.0.0.1:${port}`, { credential, deadlineMs: 10_000, transport: { lbPolicy: 'round_robin' } });
    try {
      const counted = async () => {
        const stream = (client as unknown as { count(): { write(m: unknown): Promise<void>; end(): Promise<unknown> } }).count();
        await stream.write({ a: 1 });
        await stream.write({ a: 2 });
        return stream.end();
      };
      assert.deepEqual(await counted(), { n: 2 });
      // The peer goes away and comes back 600 ms later; a stream opened meanwhile still lands.
      before.forceShutdown();
      await new Promise((r) => setTimeout(r, 100));
      const restarted = new Promise((r) => setTimeout(r, 600)).then(() => serve(port));
      assert.deepEqual(await counted(), { n: 2 });
      await restarted;
    } finally {
      client.close();
    }
  });

  describe('mutual TLS', () => {
    let dir: string;
    let tls: NonNullable<GrpcTransport['tls']>;
    let port: number;
    before(async function () {
      dir = mkdtempSync(join(tmpdir(), 'kit-tls-'));
      const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
      try {
        openssl(
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=test-ca',
          '-keyout',
          'ca.key',
          '-out',
          'ca.crt',
        );
      } catch {
        console.log('    skipped: no openssl on this machine to make the certificates');
        this.skip();
      }
      writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:supply.internal\nextendedKeyUsage=serverAuth,clientAuth\n');
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=supply.internal', '-keyout', 'tls.key', '-out', 'tls.csr');
      openssl(
        'x509',
        '-req',
        '-in',
        'tls.csr',
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        'ext.cnf',
        '-out',
        'tls.crt',
      );
      tls = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: join(dir, 'ca.crt'), serverName: 'supply.internal' };
      const s = await startWho('tls', { lbPolicy: 'round_robin', tls });
      servers.push(s.server);
      port = s.port;
    });
    after(() => dir && rmSync(dir, { recursive: true, force: true }));

    it('serves a client holding a certificate of the same CA', async () => {
      assert.deepEqual([...(await namesSeen(`127.0.0.1:${port}`, { lbPolicy: 'round_robin', tls }, 1))], ['tls']);
    });

    it('refuses a plaintext client', async () => {
      await assert.rejects(namesSeen(`127.0.0.1:${port}`, { lbPolicy: 'round_robin' }, 1), { code: 'unavailable' });
    });
  });

  it('reads the transport from the environment, and wants the three TLS files together', () => {
    const base = { SERVICE_CREDENTIAL: 'x'.repeat(32) };
    assert.deepEqual(loadConfig({ target: 'tokens' }, base).grpcTransport, {
      lbPolicy: 'round_robin',
      maxConnectionAgeMs: undefined,
      tls: undefined,
    });
    const env = {
      ...base,
      GRPC_LB_POLICY: 'pick_first',
      GRPC_TLS_CERT: '/c',
      GRPC_TLS_KEY: '/k',
      GRPC_TLS_CA: '/a',
      GRPC_MAX_CONNECTION_AGE_MS: '60000',
    };
    assert.deepEqual(loadConfig({ target: 'tokens' }, env).grpcTransport, {
      lbPolicy: 'pick_first',
      maxConnectionAgeMs: 60_000,
      tls: { certFile: '/c', keyFile: '/k', caFile: '/a', serverName: undefined },
    });
    assert.throws(() => loadConfig({ target: 'tokens' }, { ...base, GRPC_TLS_CERT: '/c' }), ConfigError);
    assert.throws(() => loadConfig({ target: 'tokens' }, { ...base, GRPC_LB_POLICY: 'random' }), ConfigError);
  });
});

describe('grpc.health.v1 liveness', () => {
  it('answers SERVING for `liveness` while readiness fails', async () => {
    const server = new Server();
    server.addService(
      grpc_health_v1.HealthService,
      healthService('kit.test.Who', async () => false),
    );
    const port = await bindServer(server, '127.0.0.1', 0);
    const client = createClient(grpc_health_v1.HealthService, `127.0.0.1:${port}`, { credential, deadlineMs: 5_000 });
    try {
      const { SERVING, NOT_SERVING } = grpc_health_v1.HealthCheckResponse_ServingStatus;
      assert.equal((await client.check({ service: LIVENESS_SERVICE })).status, SERVING);
      assert.equal((await client.check({ service: '' })).status, NOT_SERVING);
      assert.equal((await client.check({ service: 'kit.test.Who' })).status, NOT_SERVING);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});
