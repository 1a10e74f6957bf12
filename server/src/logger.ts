import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Structured logs on stdout, or on `destination`. Anything that could hold a secret is
 * redacted by path, and the code never logs keys or signing secrets on purpose either.
 * `scrub`, given by the assembly (this module imports nothing of the project), sees each
 * line as written: it redacts what a client put where no path names it (an error's
 * message quoting a request, say).
 */
export function createLogger(level: string, scrub?: (line: string) => string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    ...(scrub ? { hooks: { streamWrite: scrub } } : {}),
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'apiKey', 'api_key', 'signingSecret', 'signing_secret', 'secret'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
