import pino, { type Logger } from 'pino';
import { currentContext } from './context';

export type { Logger };

/** Header and field names whose values must never reach a log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'password',
  'token',
  'plain_text_token',
  '*.password',
  '*.token',
  '*.plain_text_token',
];

/** JSON logs; every line written inside a request carries its request id, tenant and token id. */
export function createLogger(level: string, name = 'supply'): Logger {
  return pino({
    name,
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    mixin() {
      const ctx = currentContext();
      if (!ctx) return {};
      return { request_id: ctx.requestId, tenant: ctx.tenant, token_id: ctx.principal?.tokenId };
    },
  });
}
