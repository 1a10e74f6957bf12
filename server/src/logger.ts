import { pino, type Logger } from 'pino';

/**
 * Structured logs on stdout. Anything that could hold a secret is redacted by path,
 * and the code never logs keys or signing secrets on purpose either.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'api_key', 'signingSecret', 'signing_secret', 'secret'],
      censor: '[redacted]',
    },
  });
}
