// The public surface of the signing core: pure functions over bytes and JSON values (node:crypto is the only I/O).
// The engine, the gateway and the SDK import from here; docs/signing.md describes every structure.
export { canonicalJson, CanonicalJsonError } from './canonical-json.ts';
export { SigningError, signingErrorCodes, type SigningErrorCode, type SigningErrorDetails } from './errors.ts';
export { bincodeType, encodeBincode, type BincodeType, type EnumValue, type EnumVariant, type StructFields } from './bincode.ts';
export {
  base64ToBytes,
  base64UrlOrStandardToBytes,
  bytesToBase64,
  bytesToHex,
  canonicalUuidText,
  hexToBytes,
  isCanonicalUuidText,
  uuidBytesFromText,
} from './encoding.ts';
export {
  formatRfc3339MillisecondsUtc,
  formatRfc3339SecondsUtc,
  isRfc3339SecondsUtc,
  normalizeRfc3339,
  parseRfc3339,
  parseRfc3339MillisecondsUtc,
  parseRfc3339SecondsUtc,
  type Rfc3339Time,
} from './rfc3339.ts';
export {
  allowedToolsDigest,
  artifactsDigest,
  blake3Digest,
  canonicalJsonBytes,
  jsonDigestBlake3,
  normalizedAllowedTools,
  sha256,
  sha256Hex,
} from './digests.ts';
export {
  Ed25519PublicKey,
  ed25519PublicKey,
  ed25519SignerFromSeed,
  verifyEd25519,
  type Ed25519Signer,
} from './ed25519.ts';
export {
  assertFundableSigningVersion,
  assertKnownSigningVersion,
  encodeCompletionContractSign,
  encodeEvidenceSign,
  encodeIntentCreationSign,
  evidenceSigningBytes,
  intentCreationSigningBytes,
  type CompletionContractSign,
  type EvidenceSign,
  type EvidenceSigningInput,
  type FundableSigningVersion,
  type IntentCreationSign,
  type IntentCreationSigningInput,
  type IntentSigningVersion,
  type PolicyBindingSign,
  intentSigningVersionsFundable,
} from './signed-structs.ts';
export {
  encodeLedgerRowBody,
  encodeLedgerRowBodyAroundSeq,
  ledgerGenesisRowHash,
  ledgerRowFormatVersion,
  ledgerRowHash,
  ledgerSides,
  type LedgerRowBody,
  type LedgerSide,
} from './ledger-row.ts';
export { artifactSignatureAlgorithm, type ArtifactKindName } from './artifact-kinds.ts';
export { canonicalArtifactBytes, signArtifact, verifyArtifact, type VerifiedArtifact, type VerifyArtifactOptions } from './artifacts.ts';
export {
  createRecognitionProof,
  decodeRecognitionProofHeader,
  parseRecognitionProof,
  parseRecognitionProofHeader,
  recognitionProofHeaderName,
  recognitionProofKind,
  recognitionPurposes,
  recognitionVerifierIdDefault,
  verifyRecognitionProof,
  type CreateRecognitionProofParams,
  type RecognitionExpectations,
  type RecognitionProof,
  type VerifiedRecognitionProof,
} from './recognition.ts';
