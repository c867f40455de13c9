import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { answerClientErrors } from './client-errors';

/** Writes raw bytes and reads the whole answer (the server closes the connection). */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

describe('requests the HTTP parser refuses', () => {
  let server: Server;
  let port: number;
  before(async () => {
    server = createServer((_req, res) => res.end('ok'));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const parse = (answer: string) => {
    const [head, body] = answer.split('\r\n\r\n');
    return { status: Number(head!.split(' ')[1]), head: head!, body: JSON.parse(body!) };
  };

  it('answers headers over the limit with a 431 problem naming the path, and a request id', async () => {
    const answer = parse(await raw(port, `GET /demo/api/v1/uoms?page=1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'L'.repeat(20_000)}\r\n\r\n`));
    assert.equal(answer.status, 431);
    assert.match(answer.head, /Content-Type: application\/problem\+json/);
    const id = /X-Request-Id: (\S+)/.exec(answer.head)?.[1];
    assert.deepEqual(answer.body, {
      type: '/problems/headers-too-large',
      title: 'Request header fields too large',
      status: 431,
      detail: 'The request headers are larger than this server accepts (16 KB in all).',
      instance: '/demo/api/v1/uoms',
      request_id: id,
    });
  });

  it('answers a request that is not HTTP with a 400 problem', async () => {
    const answer = parse(await raw(port, 'HELLO\r\n\r\n'));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.type, '/problems/bad-request');
    assert.equal(answer.body.instance, '');
  });
});
