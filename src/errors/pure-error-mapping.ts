// The pure modules raise their own errors (predicate/errors.ts: PredicateError, signing/errors.ts: SigningError),
// without HTTP statuses or the catalogue; here they become the catalogue's ServiceErrors, for every surface that
// answers a caller (the HTTP error handler, the console, the CLI) and for the services that report an error's code
// in words. Codes and messages are those the API has always answered.
import { errorCatalogue, type ErrorCode } from './catalogue.ts';
import { ServiceError } from './service-error.ts';
import { PredicateError, type PredicateErrorCode } from '../predicate/errors.ts';
import { SigningError, type SigningErrorCode } from '../signing/errors.ts';

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

// Every code the signing core raises is a catalogue code (a compile-time check).
const signingCodesAreCatalogued: Record<SigningErrorCode, ErrorCode> = {
  'signing.value_invalid': 'signing.value_invalid',
  'signing.version_unsupported': 'signing.version_unsupported',
  'signing.version_deprecated': 'signing.version_deprecated',
  'artifact.malformed': 'artifact.malformed',
  'artifact.schema_version_unsupported': 'artifact.schema_version_unsupported',
  'artifact.kind_unknown': 'artifact.kind_unknown',
  'artifact.algorithm_unsupported': 'artifact.algorithm_unsupported',
  'artifact.key_untrusted': 'artifact.key_untrusted',
  'artifact.signature_invalid': 'artifact.signature_invalid',
  'recognition.required': 'recognition.required',
  'recognition.malformed': 'recognition.malformed',
  'recognition.unsupported': 'recognition.unsupported',
  'recognition.expired': 'recognition.expired',
  'recognition.not_yet_valid': 'recognition.not_yet_valid',
  'recognition.window_too_long': 'recognition.window_too_long',
  'recognition.tenant_mismatch': 'recognition.tenant_mismatch',
  'recognition.verifier_mismatch': 'recognition.verifier_mismatch',
  'recognition.purpose_mismatch': 'recognition.purpose_mismatch',
  'recognition.method_mismatch': 'recognition.method_mismatch',
  'recognition.path_mismatch': 'recognition.path_mismatch',
  'recognition.body_mismatch': 'recognition.body_mismatch',
  'recognition.key_mismatch': 'recognition.key_mismatch',
  'recognition.signature_invalid': 'recognition.signature_invalid',
};

/** A predicate document's error as the API answers it: the catalogue message, then the reason and where. */
export function serviceErrorOfPredicate(error: PredicateError): ServiceError {
  const code = predicateCodesAreCatalogued[error.code];
  const { details } = error;
  const reason = code.startsWith('predicate.') && typeof details['reason'] === 'string' ? ` (${details['reason']} at "${String(details['pointer'])}")` : '';
  return new ServiceError(code, { message: errorCatalogue[code].message + reason, details, cause: error });
}

/** A signing refusal as the API answers it: the catalogue's message for the code, and the details as raised (the
 * field and the reason are there, so the message stays the catalogue's, word for word). */
export function serviceErrorOfSigning(error: SigningError): ServiceError {
  const code = signingCodesAreCatalogued[error.code];
  return new ServiceError(code, { ...(error.details ? { details: error.details } : {}), cause: error });
}

/** `error` as a ServiceError when it is one of the pure modules' errors; otherwise `error` itself, unchanged. */
export function asServiceError<T>(error: T): T | ServiceError {
  if (error instanceof PredicateError) return serviceErrorOfPredicate(error);
  if (error instanceof SigningError) return serviceErrorOfSigning(error);
  return error;
}
