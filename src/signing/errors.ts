// The signing core's own error: what is wrong with a value to be signed or with a signed artifact or recognition
// proof, as a code and the details that locate it. No HTTP status and no catalogue here: the services and surfaces
// map it to the error catalogue (src/errors/pure-error-mapping.ts), which answers it with the same code.

/** Every code this module raises; each is also a code of the service's error catalogue (checked where it maps). */
export const signingErrorCodes = [
  'signing.value_invalid',
  'signing.version_unsupported',
  'signing.version_deprecated',
  'artifact.malformed',
  'artifact.schema_version_unsupported',
  'artifact.kind_unknown',
  'artifact.algorithm_unsupported',
  'artifact.key_untrusted',
  'artifact.signature_invalid',
  'recognition.required',
  'recognition.malformed',
  'recognition.unsupported',
  'recognition.expired',
  'recognition.not_yet_valid',
  'recognition.window_too_long',
  'recognition.tenant_mismatch',
  'recognition.verifier_mismatch',
  'recognition.purpose_mismatch',
  'recognition.method_mismatch',
  'recognition.path_mismatch',
  'recognition.body_mismatch',
  'recognition.key_mismatch',
  'recognition.signature_invalid',
] as const;

export type SigningErrorCode = (typeof signingErrorCodes)[number];

export type SigningErrorDetails = Record<string, unknown>;

export class SigningError extends Error {
  readonly code: SigningErrorCode;
  /** Absent when the code says it all (`recognition.expired`): the API then answers without details. */
  readonly details: SigningErrorDetails | undefined;

  constructor(code: SigningErrorCode, details?: SigningErrorDetails) {
    super(describe(code, details));
    this.name = 'SigningError';
    this.code = code;
    this.details = details;
  }
}

/** A message for logs and for callers of the core itself (the SDK): the code, then the field and why. Every
 * reason is written to follow its field's name ("deadline must be an RFC 3339 timestamp"). */
function describe(code: SigningErrorCode, details: SigningErrorDetails | undefined): string {
  const field = typeof details?.['field'] === 'string' ? details['field'] : undefined;
  const reason = typeof details?.['reason'] === 'string' ? details['reason'] : undefined;
  const what = [field, reason].filter((part) => part !== undefined).join(' ');
  return what === '' ? code : `${code}: ${what}`;
}
