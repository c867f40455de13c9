import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, credentials, Metadata, Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import pino from 'pino';
import { createClient } from './client';
import { adaptService, type CallContext } from './server';

const json = (value: unknown) => Buffer.from(JSON.stringify(value ?? null));
const parse = (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as unknown;
const unary = (path: string) => ({
  path,
  requestStream: false as const,
  responseStream: false as const,
  requestSerialize: json,
  requestDeserialize: parse,
  responseSerialize: json,
  responseDeserialize: parse,
});
const definition = { run: unary('/kit.test.Probe/Run') };

/** What each call's handler saw; `wait` says how the handler behaves. */
interface Seen {
  ctx: CallContext;
  abortedAtStart?: boolean;
  abortedAtEnd?: boolean;
}

describe('adaptService', function () {
  this.timeout(10_000);
  const credential = 'test-credential';
  const seen: Seen[] = [];
  let server: Server;
  let address: string;

  before(async () => {
    const handlers = {
      run: async (request: { wait: 'none' | 'late-signal' | 'until-aborted' | 'signal-after-answer'; ms?: number }, ctx: CallContext) => {
        const entry: Seen = { ctx };
        seen.push(entry);
        if (request.wait === 'late-signal') {
          // Reads the signal only once the deadline has passed.
          await sleep(request.ms ?? 0);
          entry.abortedAtStart = ctx.signal.aborted;
        } else if (request.wait === 'until-aborted') {
          entry.abortedAtStart = ctx.signal.aborted;
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
          entry.abortedAtEnd = ctx.signal.aborted;
        }
        return { requestId: ctx.requestId, tenant: ctx.tenant ?? null, principal: ctx.principal ?? null };
      },
    };
    server = new Server();
    server.addService(
      definition as unknown as ServiceDefinition,
      adaptService(definition as unknown as ServiceDefinition, handlers as never, { credential, logger: pino({ level: 'silent' }) }),
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    address = `127.0.0.1:${port}`;
  });
  after(() => server?.forceShutdown());

  const client = (secret = credential) => createClient(definition, address, { credential: secret, deadlineMs: 5_000 });

  it('restores the caller context, and names a call that came without a request id', async () => {
    const c = client();
    try {
      const principal = { tenant: 'demo', tokenId: 7, userId: 3, scopes: ['public_api.read'], isAdmin: false };
      assert.deepEqual(await c.run({ wait: 'none' } as never, { context: { requestId: 'r-1', tenant: 'demo', principal } }), {
        requestId: 'r-1',
        tenant: 'demo',
        principal,
      });
      const anonymous = (await c.run({ wait: 'none' } as never, { context: { requestId: '' } })) as { requestId: string; tenant: null };
      assert.match(anonymous.requestId, /^[0-9a-f-]{36}$/);
      assert.equal(anonymous.tenant, null);
    } finally {
      c.close();
    }
  });

  it('refuses a wrong service credential', async () => {
    const c = client('wrong');
    try {
      await assert.rejects(c.run({ wait: 'none' } as never, { context: { requestId: 'r' } }), { code: 'unauthenticated' });
    } finally {
      c.close();
    }
  });

  it("aborts the handler's signal at the deadline, also when it is read after the deadline", async () => {
    const c = client();
    try {
      const before = seen.length;
      await assert.rejects(c.run({ wait: 'until-aborted' } as never, { context: { requestId: 'r' }, deadlineMs: 150 }), {
        code: 'deadline_exceeded',
      });
      await assert.rejects(c.run({ wait: 'late-signal', ms: 300 } as never, { context: { requestId: 'r' }, deadlineMs: 100 }), {
        code: 'deadline_exceeded',
      });
      await sleep(400);
      const [waiting, late] = seen.slice(before);
      assert.equal(waiting!.abortedAtStart, false);
      assert.equal(waiting!.abortedAtEnd, true);
      assert.equal(late!.abortedAtStart, true);
      assert.ok(Number.isFinite(waiting!.ctx.deadline));
    } finally {
      c.close();
    }
  });

  it('aborts the signal of a call its caller cancelled, and never that of a call that finished', async () => {
    const raw = new Client(address, credentials.createInsecure());
    try {
      const before = seen.length;
      const metadata = new Metadata();
      metadata.set('x-service-credential', credential);
      let settle!: (err: unknown) => void;
      const answered = new Promise((resolve) => (settle = resolve));
      const call = raw.makeUnaryRequest(
        definition.run.path,
        json,
        parse,
        { wait: 'until-aborted' },
        metadata,
        { deadline: Date.now() + 60_000 },
        settle,
      );
      await sleep(100);
      call.cancel();
      assert.equal(((await answered) as { code: number }).code, 1);
      await sleep(100);
      const [cancelled] = seen.slice(before);
      assert.equal(cancelled!.abortedAtEnd, true);
    } finally {
      raw.close();
    }
    const d = client();
    try {
      const before = seen.length;
      await d.run({ wait: 'none' } as never, { context: { requestId: 'r' }, deadlineMs: 100 });
      await sleep(200);
      assert.equal(seen[before]!.ctx.signal.aborted, false);
    } finally {
      d.close();
    }
  });
});
