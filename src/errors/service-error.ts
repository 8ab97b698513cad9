// The one error type that carries a catalogue code out of any module to the HTTP envelope.
import { errorCatalogue, type ErrorCode } from './catalogue.ts';

export type ErrorDetails = Record<string, unknown>;

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, options: { message?: string; details?: ErrorDetails; cause?: unknown } = {}) {
    const entry = errorCatalogue[code];
    super(options.message ?? entry.message, { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.statusCode = entry.status;
    this.details = options.details;
  }
}
