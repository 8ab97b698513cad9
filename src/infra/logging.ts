// pino options for the whole process: request ids on every line, and credentials never written. What the app adds
// to hide (the rails' credential headers and secret fields) its caller hands in: infrastructure knows no rail.
import pino from 'pino';
import type { LogLevel } from '../config.ts';

/** Every header or field of the service's own that may carry a credential, a token or a signature. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-svc-agent-recognition-proof"]',
  'req.headers["x-svc-already-counted"]',
  'res.headers["set-cookie"]',
  '*.api_key',
  '*.apiKey',
  '*.token',
  '*.capability_token',
  '*.password',
  '*.secret',
  // Opened secrets, should an object carrying them ever be logged.
  '*.secrets',
];

/** The process's logger. `alsoRedacted`: more paths to hide, in pino's path syntax (the server passes the rails'
 * credential headers and secret fields, src/rails/index.ts railRedactedPaths). */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream, alsoRedacted: readonly string[] = []): pino.Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: [...redactedPaths, ...alsoRedacted], censor: '[redacted]' },
    serializers: {
      // Fastify's default request serializer keeps the URL; ours also drops the query string, which is
      // the one place a careless client might put a credential.
      req: (request: { method: string; url: string; hostname?: string; ip?: string }) => ({
        method: request.method,
        path: request.url.split('?')[0],
        host: request.hostname,
        remote_address: request.ip,
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
