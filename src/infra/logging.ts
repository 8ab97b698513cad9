// pino options for the whole process: request ids on every line, and credentials never written.
import pino from 'pino';
import type { LogLevel } from '../config.ts';

/** Every header or field that may carry a credential, a token or a signature. */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-svc-agent-recognition-proof"]',
  'req.headers["payment-signature"]',
  'req.headers["x-svc-payment-authorization"]',
  'req.headers["x-svc-already-counted"]',
  'res.headers["set-cookie"]',
  '*.api_key',
  '*.apiKey',
  '*.token',
  '*.capability_token',
  '*.password',
  '*.secret',
  // The live rails' secrets (docs/rails.md#live-rails), should a body or an object carrying them ever be logged.
  '*.x402_facilitator_api_key',
  '*.mpp_processor_secret_key',
  '*.secrets',
];

export function createLogger(level: LogLevel, destination?: pino.DestinationStream): pino.Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
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
