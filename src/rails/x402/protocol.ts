// The x402 v2 protocol (`x402_usdc_base`): USDC on Base, `exact` scheme, as sandbox and live share it. A 402
// carries `PAYMENT-REQUIRED` (standard base64 of a PaymentRequired with one requirement); the retry carries
// `payment-signature` (standard base64 of a PaymentPayload that copies that requirement as `accepted`). This file
// builds the challenge, reads the credential and makes the checks a facilitator makes of the EIP-3009
// authorization save its signature (docs/rails.md); ./sandbox.ts simulates the facilitator, ./live.ts reaches one.
import { randomBytes } from 'node:crypto';
import { PaymentRequiredV2Schema, parsePaymentPayload, type PaymentPayloadV2, type PaymentRequirementsV2 } from '@x402/core/schemas';
import { x402MaxTimeoutSeconds, x402ValidBeforeMarginSeconds } from '../../limits.ts';
import { canonicalJson } from '../../signing/canonical-json.ts';
import { isEvmAddressText, sameEvmAddress } from '../evm.ts';
import { textSetting, settingsOf } from '../settings.ts';
import type { CredentialOutcome, FundingContext, IssuedChallenge, PresentedCredential } from '../types.ts';
import { decodeStandardBase64, isPlainObject, paymentProblem, parseJsonBytes, readOneHeader, sha256, sha256Hex, type PaymentProblemCode } from '../wire.ts';
import { x402AddressField } from './settings.ts';
import { x402ChallengeHeaderName, x402CredentialHeaderName, x402RailName } from './wire.ts';

/** USDC of each environment's network and its EIP-712 domain (docs/rails.md#x402-x402_usdc_base; a wrong `name`
 * breaks signatures). */
export const x402Networks = {
  sandbox: { network: 'eip155:84532', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2' },
  live: { network: 'eip155:8453', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2' },
} as const;

/** Where sandbox payments are addressed when the tenant configured no x402_address. Nobody holds its key: the
 * sandbox never broadcasts anything, and a real payment to it would be lost, so it is only ever a test value. */
export const sandboxX402PayTo = '0x5a4d000000000000000000000000000000005a4d';

/** USDC has 6 decimals: one cent is 10,000 base units. */
const baseUnitsPerCent = 10_000n;

export function usdcBaseUnits(amountCents: number): string {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0) throw new Error('amountCents must be a positive safe integer');
  return (BigInt(amountCents) * baseUnitsPerCent).toString();
}

/** The challenge id of a requirement: SHA-256 of its canonical JSON. A credential copies the requirement as
 * `accepted`, so the same function names the challenge a credential answers. */
export function x402ChallengeId(requirements: unknown): string {
  return sha256Hex(canonicalJson(requirements));
}

/** The PaymentRequired of a 402, checked against @x402/core's schema. `challengeNonce` goes into `extra`, so that
 * each challenge (and so each challenge id) is unique even for equal amounts and recipients. */
export function buildX402PaymentRequired(context: FundingContext, challengeNonce: string) {
  const chain = x402Networks[context.environment];
  const requirements: PaymentRequirementsV2 = {
    scheme: 'exact',
    network: chain.network,
    amount: usdcBaseUnits(context.amountCents),
    asset: chain.asset,
    payTo: textSetting(settingsOf(context.config, x402RailName), x402AddressField) ?? (context.environment === 'sandbox' ? sandboxX402PayTo : missingPayTo()),
    maxTimeoutSeconds: x402MaxTimeoutSeconds,
    extra: { name: chain.name, version: chain.version, challenge_nonce: challengeNonce },
  };
  const paymentRequired = {
    x402Version: 2 as const,
    error: 'PAYMENT-SIGNATURE header is required',
    resource: { url: context.resourceUrl, description: `Fund intent ${context.intentId}`, mimeType: 'application/json' },
    accepts: [requirements],
  };
  const checked = PaymentRequiredV2Schema.safeParse(paymentRequired);
  // Everything here is ours: a requirement the schema refuses is a programmer error, never a client's.
  if (!checked.success) throw new Error(`x402 PaymentRequired does not match the v2 schema: ${checked.error.message}`);
  return { paymentRequired, requirements };
}

function missingPayTo(): never {
  throw new Error(`a live x402 challenge needs the configuration's ${x402AddressField}`);
}

export function encodeStandardBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

export interface StoredX402Challenge {
  rail: typeof x402RailName;
  intent_id: string;
  requirements: PaymentRequirementsV2;
}

/** An EIP-3009 `TransferWithAuthorization` as the payload carries it: addresses as sent, the uint256 fields as
 * decimal strings, the nonce as 0x + 64 hex (a bytes32). */
export interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** The largest uint256: EIP-3009's value, validAfter and validBefore are uint256 on chain. */
const uint256Max = (1n << 256n) - 1n;
const bytes32Pattern = /^0x[0-9a-fA-F]{64}$/;

/** A uint256 as a decimal string (x402 v2 writes its integers so); leading zeros are allowed, as on chain. */
function isUint256Text(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9]{1,80}$/.test(value) && BigInt(value) <= uint256Max;
}

function readAuthorization(payload: PaymentPayloadV2): Authorization | string {
  const authorization = payload.payload['authorization'];
  if (!isPlainObject(authorization)) return 'payload.authorization is missing (an EIP-3009 authorization is expected)';
  const { from, to, value, validAfter, validBefore, nonce } = authorization;
  if (!isEvmAddressText(from)) return 'payload.authorization.from is not 0x and 40 hex digits';
  if (!isEvmAddressText(to)) return 'payload.authorization.to is not 0x and 40 hex digits';
  if (!isUint256Text(value)) return 'payload.authorization.value is not a uint256 written as a decimal string';
  if (!isUint256Text(validAfter)) return 'payload.authorization.validAfter is not a uint256 written as a decimal string';
  if (!isUint256Text(validBefore)) return 'payload.authorization.validBefore is not a uint256 written as a decimal string';
  if (typeof nonce !== 'string' || !bytes32Pattern.test(nonce)) return 'payload.authorization.nonce is not 0x and 64 hex digits (a bytes32)';
  return { from, to, value, validAfter, validBefore, nonce };
}

/**
 * The payment authorization an x402 credential spends, as the token contract counts its uses: an EIP-3009 nonce is
 * good once per token and payer (`authorizationState(payer, nonce)`), whoever it pays. Lowercased, since addresses
 * and hex compare without case. Undefined when the payload carries no well-formed payer and nonce (the rail refuses
 * such a credential anyway).
 */
export function x402AuthorizationKey(payload: PaymentPayloadV2): string | undefined {
  const authorization = payload.payload['authorization'];
  if (!isPlainObject(authorization)) return undefined;
  const { from, nonce } = authorization;
  if (!isEvmAddressText(from) || typeof nonce !== 'string' || !bytes32Pattern.test(nonce)) return undefined;
  return [payload.accepted.network, payload.accepted.asset, from, nonce].join('/').toLowerCase();
}

/** A fresh x402 challenge for `context` (sandbox and live alike). */
export function issueX402Challenge(settlementRail: string, context: FundingContext): IssuedChallenge {
  const { paymentRequired, requirements } = buildX402PaymentRequired(context, randomBytes(16).toString('hex'));
  const challengeId = x402ChallengeId(requirements);
  const stored: StoredX402Challenge = { rail: x402RailName, intent_id: context.intentId, requirements };
  return {
    challengeId,
    stored: { ...stored },
    headers: { [x402ChallengeHeaderName]: encodeStandardBase64Json(paymentRequired) },
    funding: { ...x402Funding(settlementRail, 'created', context, challengeId), target_address: requirements.payTo },
  };
}

/** The `funding` fields of an x402 answer. Outcomes that end in a fresh 402 (declined, rejected) name no
 * challenge: the fresh challenge's id is the one to answer, and the fund route merges these fields over it. */
export function x402Funding(settlementRail: string, status: string, context: FundingContext, challengeId?: string): Record<string, unknown> {
  const { network, asset } = x402Networks[context.environment];
  return { settlement_rail: settlementRail, status, ...(challengeId ? { challenge_id: challengeId } : {}), asset, network };
}

/** A credential the rail refuses: a 402 problem for the client, and the x402 error code as `error_reason`. */
export function x402Rejected(
  settlementRail: string,
  context: FundingContext,
  problem: PaymentProblemCode,
  errorReason: string,
  detail: string,
): Extract<CredentialOutcome, { status: 'rejected' }> {
  return {
    status: 'rejected',
    problem: paymentProblem(problem, detail),
    funding: { ...x402Funding(settlementRail, 'authorization_failed', context), error_reason: errorReason },
  };
}

/** What this service checks itself before any facilitator sees a credential, and again when it asks a rail about a
 * claim: that it answers a challenge offered for this intent, copied unchanged, with a well-formed EIP-3009
 * authorization that pays `payTo`. Its terms (amount and validity window) are checkX402Terms's. The signature is the
 * facilitator's to verify (live) or not checked (sandbox). */
export function checkX402Credential(
  settlementRail: string,
  context: FundingContext,
  payload: PaymentPayloadV2,
  stored: StoredX402Challenge | undefined,
): { ok: true; requirements: PaymentRequirementsV2; authorization: Authorization } | { ok: false; outcome: Extract<CredentialOutcome, { status: 'rejected' }> } {
  const reject = (problem: PaymentProblemCode, errorReason: string, detail: string) =>
    ({ ok: false as const, outcome: x402Rejected(settlementRail, context, problem, errorReason, detail) });
  if (!stored || stored.intent_id !== context.intentId) {
    return reject('invalid-challenge', 'invalid_payment_requirements',
      'accepted is not a requirement this service offered for this intent; answer the latest PAYMENT-REQUIRED challenge');
  }
  if (canonicalJson(payload.accepted) !== canonicalJson(stored.requirements)) {
    return reject('invalid-challenge', 'invalid_payment_requirements', 'accepted differs from the offered requirement; copy it unchanged');
  }
  const requirements = stored.requirements;
  const authorization = readAuthorization(payload);
  if (typeof authorization === 'string') return reject('verification-failed', 'invalid_payload', authorization);
  // An escrow (auth-capture) authorization pays the scheme's token collector, which ./escrow.ts checks instead.
  if (requirements.scheme === 'exact' && !sameEvmAddress(authorization.to, requirements.payTo)) {
    return reject('verification-failed', 'invalid_exact_evm_payload_recipient_mismatch', `payload.authorization.to must be payTo ${requirements.payTo}`);
  }
  return { ok: true, requirements, authorization };
}

/**
 * The authorization's terms, as an x402 facilitator judges them before it submits one (x402 `exact` on EVM):
 * valid now (`validAfter` ≤ now) and long enough to settle (`validBefore` ≥ now + x402ValidBeforeMarginSeconds),
 * and `value` exactly the amount. The `exact` scheme pays a specific amount: more is refused like less, so that no
 * payment is ever taken for more than the ledger records. Undefined when the terms hold.
 */
export function checkX402Terms(
  settlementRail: string,
  context: FundingContext,
  authorization: Authorization,
  requirements: PaymentRequirementsV2,
  nowMs: number,
): Extract<CredentialOutcome, { status: 'rejected' }> | undefined {
  const reject = (problem: PaymentProblemCode, errorReason: string, detail: string) => x402Rejected(settlementRail, context, problem, errorReason, detail);
  const nowSeconds = BigInt(Math.floor(nowMs / 1000));
  if (BigInt(authorization.validBefore) < nowSeconds + BigInt(x402ValidBeforeMarginSeconds)) {
    return reject('verification-failed', 'invalid_exact_evm_payload_authorization_valid_before',
      `payload.authorization.validBefore ${authorization.validBefore} has passed, or leaves less than ${x402ValidBeforeMarginSeconds} s to settle (now ${nowSeconds})`);
  }
  if (BigInt(authorization.validAfter) > nowSeconds) {
    return reject('verification-failed', 'invalid_exact_evm_payload_authorization_valid_after',
      `payload.authorization.validAfter ${authorization.validAfter} is in the future (now ${nowSeconds})`);
  }
  const value = BigInt(authorization.value);
  const amount = BigInt(requirements.amount);
  if (value < amount) {
    return reject('payment-insufficient', 'invalid_exact_evm_payload_authorization_value_mismatch',
      `payload.authorization.value ${authorization.value} is less than the amount ${requirements.amount}`);
  }
  if (value > amount) {
    return reject('verification-failed', 'invalid_exact_evm_payload_authorization_value_mismatch',
      `payload.authorization.value ${authorization.value} is more than the amount ${requirements.amount}: the exact scheme pays the amount exactly`);
  }
  return undefined;
}

/** A credential judged afresh at `nowMs`: checkX402Credential, then checkX402Terms. */
export function judgeX402Credential(
  settlementRail: string,
  context: FundingContext,
  payload: PaymentPayloadV2,
  stored: StoredX402Challenge | undefined,
  nowMs: number,
): ReturnType<typeof checkX402Credential> {
  const checked = checkX402Credential(settlementRail, context, payload, stored);
  if (!checked.ok) return checked;
  const refused = checkX402Terms(settlementRail, context, checked.authorization, checked.requirements, nowMs);
  return refused ? { ok: false, outcome: refused } : checked;
}

/** The refusal of a credential whose authorization (payer and nonce) another attempt has already spent or is
 * spending: the token contract takes a nonce once, so a second payment with it cannot settle. */
export function x402AuthorizationReused(settlementRail: string, context: FundingContext): Extract<CredentialOutcome, { status: 'rejected' }> {
  return x402Rejected(settlementRail, context, 'verification-failed', 'invalid_exact_evm_nonce_already_used',
    'payload.authorization.nonce was already used by this payer for another payment; sign a new authorization with a fresh nonce');
}

/** The x402 credential a fund request presents in `payment-signature`, read without the intent (src/engine/fund.ts
 * reads it before the intent, to fetch the attempt it names in the same round trip). */
export function readX402Credential(headers: Record<string, string | string[] | undefined>): PresentedCredential {
  const header = readOneHeader(headers, x402CredentialHeaderName);
  if (header.kind !== 'value') return header;
  const bytes = decodeStandardBase64(header.value);
  if (!bytes) return { kind: 'malformed', reason: 'payment-signature is not standard base64' };
  const json = parseJsonBytes(bytes);
  if (json === undefined) return { kind: 'malformed', reason: 'payment-signature does not carry UTF-8 JSON' };
  if (isPlainObject(json) && json['x402Version'] !== 2) {
    return { kind: 'malformed', reason: 'payment-signature must be an x402 version 2 PaymentPayload' };
  }
  const parsed = parsePaymentPayload(json);
  if (!parsed.success || parsed.data.x402Version !== 2) {
    return { kind: 'malformed', reason: 'payment-signature is not a valid x402 v2 PaymentPayload' };
  }
  const authorizationKey = x402AuthorizationKey(parsed.data);
  return {
    kind: 'credential',
    challengeId: x402ChallengeId(parsed.data.accepted),
    digest: sha256(header.value),
    data: parsed.data,
    ...(authorizationKey === undefined ? {} : { authorizationKey }),
  };
}
