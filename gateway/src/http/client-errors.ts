import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEMS, type ProblemSlug } from './problems';

/** Node's parser refusals, by parser error code; anything else it refuses is a 400. */
const SLUG_OF: Record<string, ProblemSlug> = {
  HPE_HEADER_OVERFLOW: 'headers-too-large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'payload-too-large',
};
const DETAIL_OF: Partial<Record<ProblemSlug, string>> = {
  'headers-too-large': 'The request headers are larger than this server accepts (16 KB in all).',
  'payload-too-large': 'The request is larger than this server accepts.',
};

/** The request path from the raw bytes Node could not parse, when the request line is there. */
function pathOf(raw: Buffer | undefined): string {
  const line =
    raw
      ?.subarray(0, 16 * 1024)
      .toString('latin1')
      .split('\r\n', 1)[0] ?? '';
  const target = /^[A-Z]+ (\/\S*) HTTP\/\d\.\d$/.exec(line)?.[1] ?? '';
  return target.split('?')[0]!;
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over its size
 * limit, malformed request lines) get the problem+json answer and X-Request-Id every other
 * failure has, instead of Node's bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    // A connection the client dropped (or one already answered) has no one to tell.
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const slug = SLUG_OF[err.code ?? ''] ?? 'bad-request';
    const { status, title } = PROBLEMS[slug];
    const requestId = randomUUID();
    const body = JSON.stringify({
      type: `/problems/${slug}`,
      title,
      status,
      detail: DETAIL_OF[slug] ?? 'The request is not valid HTTP.',
      instance: pathOf(err.rawPacket),
      request_id: requestId,
    });
    socket.end(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
