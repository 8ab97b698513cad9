// The pure modules raise their own errors (predicate/errors.ts: PredicateError), without HTTP statuses or the
// catalogue; here they become the catalogue's ServiceErrors, for every surface that answers a caller (the HTTP
// error handler, the MCP dispatcher, the CLI). Codes and messages are those the API has always answered.
import { errorCatalogue, type ErrorCode } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { PredicateError, type PredicateErrorCode } from '../predicate/errors.ts';

// Every code the predicate module raises is a catalogue code (a compile-time check).
const predicateCodesAreCatalogued: Record<PredicateErrorCode, ErrorCode> = {
  'predicate.invalid': 'predicate.invalid',
  'predicate.version_unsupported': 'predicate.version_unsupported',
  'predicate.op_unknown': 'predicate.op_unknown',
  'predicate.depth_exceeded': 'predicate.depth_exceeded',
  'predicate.fuel_exceeded': 'predicate.fuel_exceeded',
  'predicate.path_too_long': 'predicate.path_too_long',
  'predicate.clauses_exceeded': 'predicate.clauses_exceeded',
  'predicate.document_too_large': 'predicate.document_too_large',
  'policy.template_unknown': 'policy.template_unknown',
  'policy.parameter_invalid': 'policy.parameter_invalid',
};

/** A predicate document's error as the API answers it: the catalogue message, then the reason and where. */
export function serviceErrorOfPredicate(error: PredicateError): ServiceError {
  const code = predicateCodesAreCatalogued[error.code];
  const { details } = error;
  const reason = code.startsWith('predicate.') && typeof details['reason'] === 'string' ? ` (${details['reason']} at "${String(details['pointer'])}")` : '';
  return new ServiceError(code, { message: errorCatalogue[code].message + reason, details, cause: error });
}

/** `error` as a ServiceError when it is one of the pure modules' errors; otherwise `error` itself, unchanged. */
export function asServiceError<T>(error: T): T | ServiceError {
  if (error instanceof PredicateError) return serviceErrorOfPredicate(error);
  return error;
}
