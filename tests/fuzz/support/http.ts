/**
 * Raw HTTP for the fuzz suite: node:http rather than fetch, so hostile requests go out as
 * written (malformed percent-escapes, any Content-Type and Content-Encoding, bodies that are
 * not what their headers say), each timed from first byte sent to last byte read.
 */
import http from 'node:http';

export interface FuzzRequest {
  /** Which operation (`POST /{tenant}/api/v1/items`) and generator class made it, for reports. */
  operation: string;
  kind: string;
  method: string;
  /** Path and query string, already percent-encoded as they go on the wire. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
}

export interface FuzzResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Parsed when the answer is JSON; undefined otherwise. */
  json: unknown;
  ms: number;
}

/** Answers slower than this fail the property; requests still running after `abortMs` are cut. */
export const SLOW_MS = 2000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

export function send(baseUrl: string, req: FuzzRequest, abortMs = 15_000): Promise<FuzzResponse> {
  const url = new URL(baseUrl);
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const headers: Record<string, string | number> = { ...req.headers };
  if (body) headers['Content-Length'] = body.length;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const out = http.request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, timeout: abortMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (/json/i.test(String(res.headers['content-type'] ?? ''))) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
        });
      },
    );
    out.on('timeout', () => out.destroy(new Error(`no answer within ${abortMs} ms`)));
    out.on('error', reject);
    out.end(body);
  });
}

/** The request as a report shows it: method, path, headers, and the start of the body. */
export function describeRequest(req: FuzzRequest, max = 600): string {
  const body = req.body === undefined ? '' : Buffer.isBuffer(req.body) ? req.body.toString('latin1') : req.body;
  const excerpt = body.length > max ? `${body.slice(0, max)}... (${body.length} bytes)` : body;
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `  ${k}: ${v.length > 200 ? `${v.slice(0, 200)}... (${v.length} chars)` : v}`)
    .join('\n');
  return `[${req.kind}] ${req.operation}\n${req.method} ${req.path.length > 400 ? `${req.path.slice(0, 400)}... (${req.path.length} chars)` : req.path}\n${headers}${excerpt ? `\n\n${excerpt}` : ''}`;
}

export function describeResponse(res: FuzzResponse, max = 600): string {
  const text = res.text.length > max ? `${res.text.slice(0, max)}...` : res.text;
  return `${res.status} (${Math.round(res.ms)} ms) ${res.headers['content-type'] ?? ''}${res.headers.location ? ` Location: ${res.headers.location}` : ''}\n${text}`;
}

export function closeAgent(): void {
  agent.destroy();
}
