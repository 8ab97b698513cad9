// The release-rule module's own error: what is wrong with a predicate document or a template's parameters, as a
// code and the details that locate it. No HTTP status and no catalogue here: the services and surfaces map it to
// the error catalogue (src/errors/pure-error-mapping.ts), which answers it as 400 with the same code.

/** Every code this module raises; each is also a code of the service's error catalogue (checked where it maps). */
export const predicateErrorCodes = [
  'predicate.invalid',
  'predicate.version_unsupported',
  'predicate.op_unknown',
  'predicate.depth_exceeded',
  'predicate.fuel_exceeded',
  'predicate.path_too_long',
  'predicate.clauses_exceeded',
  'predicate.document_too_large',
  'policy.template_unknown',
  'policy.parameter_invalid',
] as const;

export type PredicateErrorCode = (typeof predicateErrorCodes)[number];

export type PredicateErrorDetails = Record<string, unknown>;

export class PredicateError extends Error {
  readonly code: PredicateErrorCode;
  readonly details: PredicateErrorDetails;

  constructor(code: PredicateErrorCode, details: PredicateErrorDetails) {
    const reason = typeof details['reason'] === 'string' ? `: ${details['reason']} at "${String(details['pointer'])}"` : '';
    super(`${code}${reason}`);
    this.name = 'PredicateError';
    this.code = code;
    this.details = details;
  }
}
