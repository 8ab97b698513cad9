// The TypeScript SDK's public surface (`import { SvcClient } from 'svc-settlement/sdk'`). Client-side only: it
// imports the pure signing core, the sandbox credential builders and the route contracts it checks answers against,
// never server code; docs/sdk.md covers it, and `npm run build` builds this file's import graph into the package's
// dist/.
export { SvcClient, type SvcClientOptions } from './client.ts';
export {
  Events,
  verifyWebhook,
  WebhookVerificationError,
  webhookToleranceSecondsDefault,
  type Event,
  type EventOf,
  type EventType,
  type WebhookVerifyOptions,
} from './events.ts';
export type { AgentIdentity } from './core.ts';
export {
  agentKeyFromSeed,
  generateKey,
  keyFromSeed,
  payeeKeyFromSeed,
  principalKeyFromSeed,
  SvcSigningKey,
} from './keys.ts';
export { resolveGatewayBaseUrl, isLoopbackHost, type GatewayBaseUrlSources } from './url.ts';
export { gatewayBaseUrlDefault } from './defaults.ts';
export {
  deviceLogin,
  DeviceLoginDeniedError,
  DeviceLoginExpiredError,
  type DeviceLoginApiKey,
  type DeviceLoginCredential,
  type DeviceLoginOptions,
  type DeviceLoginPrompt,
  type DeviceLoginSession,
} from './device-login.ts';
export { readStoredLogin, storedLoginPath, type CredentialSource, type StoredLogin } from './stored-login.ts';
export {
  EngineHttpError,
  FundingFailedError,
  FundingPendingError,
  GatewayAuthError,
  InsecureGatewayUrlError,
  isRetryableError,
  parseErrorBody,
  retryableStatusCodes,
  SvcArgumentError,
  SvcAuthenticationError,
  SvcCapabilityError,
  SvcConfigurationError,
  SvcConflictError,
  SvcConnectionError,
  SvcContractError,
  SvcError,
  SvcIdempotencyError,
  SvcInvalidRequestError,
  SvcInvalidStateError,
  SvcNotFoundError,
  SvcPaymentRequiredError,
  SvcPermissionError,
  SvcRateLimitError,
  SvcRecognitionError,
  SvcResponseError,
  SvcServerError,
  SvcSigningError,
  SvcUnprocessableError,
  TenantBindingError,
  type ContractProblem,
} from './errors.ts';
export { fundingFailureStatuses, type FundChallenge, type FundCredentialCallback, type FundOptions, type FundResult } from './funding.ts';
export type { ConfirmParams, CreateIntentParams, Intents, PayeeParty, PolicyBindingInput, SigningParty, SubmitEvidenceParams } from './intents.ts';
export type { Capabilities, Spend, SpendOutcome, VerifyParams } from './capabilities.ts';
export type { Policies, PolicyTestParams } from './policies.ts';
export { verifyLedgerCheckpoint, type Ledger, type LedgerVerification } from './ledger.ts';
export type { RegisterKeyParams, Registry } from './registry.ts';
export type { ResolveParams, Review, ReviewEventParams, SetReleaseGateParams } from './review.ts';
export {
  decodeX402PaymentRequired,
  parseWwwAuthenticate,
  sandboxCredential,
  sandboxMppAuthorization,
  sandboxMppTokens,
  sandboxX402PaymentSignature,
  sandboxX402Payers,
  type SandboxOutcome,
} from './sandbox.ts';
export type * from './types.ts';
