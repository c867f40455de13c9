import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
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
export function createLogger(level: string, name = 'supply', redact: readonly string[] = [], destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name,
    level,
    // Operators add fields of their own (LOG_REDACT); the built-in ones always stay.
    redact: { paths: [...REDACT, ...redact], censor: '[redacted]' },
    mixin() {
      const ctx = currentContext();
      if (!ctx) return {};
      return { request_id: ctx.requestId, tenant: ctx.tenant ?? ctx.originTenant, token_id: ctx.principal?.tokenId };
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
