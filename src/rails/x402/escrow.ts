// The x402 `auth-capture` scheme on EVM, escrow flow (docs/rails.md#x402-auth-capture-escrow-held-at-the-rail): the
// payer's USDC is held by the commerce-payments `AuthCaptureEscrow` contract instead of being paid to an address of
// ours. Funding is the scheme's `authorize` (the client's one ERC-3009 `ReceiveWithAuthorization`, naming the token
// collector, relayed by the facilitator's `/settle`); settlement is `capture` (the released amount to the receiver)
// and `void` (the rest back to the payer), each a `/settle` whose payload names the operation and carries this
// service's consent: an EIP-712 signature by the receiver authorizer, a key the operator configures.
//
// This file is the binding's arithmetic, pure: the requirement we offer, the PaymentInfo a credential commits to and
// its two hashes, the checks we make before a facilitator sees a credential, and the lifecycle payloads we sign.
// Loaded only by ./live.ts (viem is heavy; a sandbox-only process never loads it).
import { encodeAbiParameters, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { PaymentPayloadV2, PaymentRequirementsV2 } from '@x402/core/schemas';
import { x402CaptureDeadlineMarginSeconds, x402RefundWindowSeconds, x402ValidBeforeMarginSeconds } from '../../limits.ts';
import { isPlainObject } from '../wire.ts';
import { isEvmAddressText, sameEvmAddress } from '../evm.ts';

export const authCaptureScheme = 'auth-capture';

/** The commerce-payments v1.1 deployment (the scheme's default): the escrow and its ERC-3009 token collector, the
 * same address on every chain. */
export const authCaptureEscrowAddress = '0x13AC3b34322D12FE27D5e192D0c2b2266d4F29CB';
export const eip3009TokenCollectorAddress = '0xEA902B37036bcb4944577ec2101ABdEDF56EbD28';

export const zeroAddress = '0x0000000000000000000000000000000000000000';

/** The onchain struct, with its Solidity names (its EIP-712 typehash must match the escrow's byte for byte). */
export interface PaymentInfo {
  operator: string;
  payer: string;
  receiver: string;
  token: string;
  /** uint120, decimal string. */
  maxAmount: string;
  preApprovalExpiry: number;
  authorizationExpiry: number;
  refundExpiry: number;
  minFeeBps: number;
  maxFeeBps: number;
  feeReceiver: string;
  /** uint256 as 0x + 64 hex. */
  salt: string;
}

/** What funding keeps to author the lifecycle later (the scheme's "durable state" of an async server). */
export interface HeldPayment {
  readonly scheme: typeof authCaptureScheme;
  readonly payment_info: PaymentInfo;
  readonly salt_nonce: string;
  readonly payment_info_hash: string;
  /** The requirement the payer accepted, sent again as `accepted` with every lifecycle payload. */
  readonly requirements: PaymentRequirementsV2;
}

const paymentInfoTypehash = keccak256(toHex(
  'PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps,address feeReceiver,uint256 salt)',
));
const saltBindingTypehash = keccak256(toHex('x402AuthCaptureSaltBinding(address receiverAuthorizer,address policy,uint256 saltNonce)'));

const paymentInfoAbi = [
  { type: 'bytes32' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'uint120' },
  { type: 'uint48' }, { type: 'uint48' }, { type: 'uint48' }, { type: 'uint16' }, { type: 'uint16' }, { type: 'address' }, { type: 'uint256' },
] as const;

function structHash(info: PaymentInfo): Hex {
  return keccak256(encodeAbiParameters(paymentInfoAbi, [
    paymentInfoTypehash, info.operator as Hex, info.payer as Hex, info.receiver as Hex, info.token as Hex, BigInt(info.maxAmount),
    info.preApprovalExpiry, info.authorizationExpiry, info.refundExpiry, info.minFeeBps, info.maxFeeBps, info.feeReceiver as Hex, BigInt(info.salt),
  ]));
}

function chainScoped(chainId: number, hash: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }], [BigInt(chainId), authCaptureEscrowAddress, hash]));
}

/** The escrow's payment id (`AuthCaptureEscrow.getHash`): over the real payer, scoped to chain and escrow. */
export function paymentInfoHash(chainId: number, info: PaymentInfo): Hex {
  return chainScoped(chainId, structHash(info));
}

/** The nonce inside the payer's ERC-3009 authorization: the same hash with the payer zeroed. */
export function signatureNonce(chainId: number, info: PaymentInfo): Hex {
  return chainScoped(chainId, structHash({ ...info, payer: zeroAddress }));
}

/** The bound salt: a commitment to the receiver authorizer (our consent key) and policy, so that a collected payment
 * cannot be re-pointed at another authorizer. */
export function boundSalt(receiverAuthorizer: string, saltNonce: string): Hex {
  return toHex(BigInt(keccak256(encodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'address' }, { type: 'address' }, { type: 'uint256' }],
    [saltBindingTypehash, receiverAuthorizer as Hex, zeroAddress, BigInt(saltNonce)],
  ))), { size: 32 });
}

export function chainIdOf(network: string): number {
  return Number(network.split(':')[1]);
}

/** The service's consent key (`receiverAuthorizer`), from the configured secret: 0x + 64 hex. Undefined when the
 * secret is not a usable key. */
export function receiverAuthorizerAccount(secret: string | null | undefined): PrivateKeyAccount | undefined {
  if (!secret || !/^(0x)?[0-9a-fA-F]{64}$/.test(secret)) return undefined;
  try {
    return privateKeyToAccount((secret.startsWith('0x') ? secret : `0x${secret}`) as Hex);
  } catch {
    return undefined;
  }
}

/**
 * The capture deadline of an intent's hold: its deadline plus the margin (x402CaptureDeadlineMarginSeconds, see
 * docs/decisions.md). Until the deadline the intent may still be released; after it, the service refunds (voids),
 * and the sweeper needs time to reach the facilitator (retries, a facilitator briefly down, clock skew) before the
 * payer may reclaim the hold. The refund deadline follows by x402RefundWindowSeconds.
 */
export function holdDeadlines(intentDeadlineMs: number): { captureDeadline: number; refundDeadline: number } {
  const captureDeadline = Math.ceil(intentDeadlineMs / 1000) + x402CaptureDeadlineMarginSeconds;
  return { captureDeadline, refundDeadline: captureDeadline + x402RefundWindowSeconds };
}

/** The `accepts` entry of an escrow challenge: `delegated` operator (the facilitator's `captureAuthorizer`), our
 * `receiverAuthorizer`, no fee, deferred capture (we capture from stored state when the intent settles). */
export function authCaptureRequirements(options: {
  network: string;
  asset: string;
  tokenName: string;
  tokenVersion: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  captureAuthorizer: string;
  receiverAuthorizer: string;
  intentDeadlineMs: number;
  challengeNonce: string;
}): PaymentRequirementsV2 {
  const { captureDeadline, refundDeadline } = holdDeadlines(options.intentDeadlineMs);
  return {
    scheme: authCaptureScheme,
    network: options.network as PaymentRequirementsV2['network'],
    amount: options.amount,
    asset: options.asset,
    payTo: options.payTo,
    maxTimeoutSeconds: options.maxTimeoutSeconds,
    extra: {
      name: options.tokenName,
      version: options.tokenVersion,
      authCaptureEscrow: authCaptureEscrowAddress,
      captureAuthorizer: options.captureAuthorizer,
      operatorType: 'delegated',
      receiverAuthorizer: options.receiverAuthorizer,
      policy: zeroAddress,
      paymentFlow: 'escrow',
      captureMode: 'deferred',
      captureDeadline,
      refundDeadline,
      feeRecipient: zeroAddress,
      minFeeBps: 0,
      maxFeeBps: 0,
      assetTransferMethod: 'eip3009',
      challenge_nonce: options.challengeNonce,
    },
  };
}

interface EscrowExtra {
  captureAuthorizer: string;
  receiverAuthorizer: string;
  captureDeadline: number;
  refundDeadline: number;
  feeRecipient: string;
  minFeeBps: number;
  maxFeeBps: number;
}

function extraOf(requirements: PaymentRequirementsV2): EscrowExtra {
  const extra = (requirements.extra ?? {}) as Record<string, unknown>;
  return {
    captureAuthorizer: String(extra['captureAuthorizer']),
    receiverAuthorizer: String(extra['receiverAuthorizer']),
    captureDeadline: Number(extra['captureDeadline']),
    refundDeadline: Number(extra['refundDeadline']),
    feeRecipient: String(extra['feeRecipient']),
    minFeeBps: Number(extra['minFeeBps']),
    maxFeeBps: Number(extra['maxFeeBps']),
  };
}

export function isAuthCaptureRequirement(requirements: { scheme?: unknown }): boolean {
  return requirements.scheme === authCaptureScheme;
}

const bytes32Pattern = /^0x[0-9a-fA-F]{64}$/;
const uintPattern = /^[0-9]{1,78}$/;

/** The escrow payload's checks this service makes before a facilitator sees it (the scheme's verification steps
 * that need no chain: shape, deadlines, time window, collector, amount, salt binding and nonce), at `nowMs`. The
 * client's signature and the payer's balance are the facilitator's. Answers the held payment, or the x402 reason
 * and a message. */
export function checkAuthCapturePayload(
  payload: PaymentPayloadV2,
  requirements: PaymentRequirementsV2,
  nowMs: number | undefined,
): { ok: true; held: HeldPayment; payer: string } | { ok: false; reason: string; detail: string } {
  const refuse = (reason: string, detail: string) => ({ ok: false as const, reason, detail });
  const body = payload.payload;
  const authorization = body['authorization'];
  const { salt, saltNonce, signature } = body as Record<string, unknown>;
  if (!isPlainObject(authorization) || typeof signature !== 'string' || typeof salt !== 'string' || typeof saltNonce !== 'string'
    || !bytes32Pattern.test(salt) || !bytes32Pattern.test(saltNonce)) {
    return refuse('invalid_auth_capture_evm_payload_format', 'payload needs authorization, signature, salt and saltNonce (0x + 64 hex each)');
  }
  const { from, to, value, validAfter, validBefore, nonce } = authorization as Record<string, unknown>;
  if (!isEvmAddressText(from) || !isEvmAddressText(to) || typeof value !== 'string' || !uintPattern.test(value)
    || typeof validAfter !== 'string' || !uintPattern.test(validAfter) || typeof validBefore !== 'string' || !uintPattern.test(validBefore)
    || typeof nonce !== 'string' || !bytes32Pattern.test(nonce)) {
    return refuse('invalid_auth_capture_evm_payload_format', 'payload.authorization is not a well-formed ERC-3009 authorization');
  }
  const extra = extraOf(requirements);
  const before = Number(validBefore);
  if (nowMs !== undefined) {
    const now = Math.floor(nowMs / 1000);
    if (extra.captureDeadline <= now + x402ValidBeforeMarginSeconds) {
      return refuse('invalid_auth_capture_evm_capture_deadline_expired', `the capture deadline ${extra.captureDeadline} has passed; fund before the intent's deadline`);
    }
    if (before <= now + x402ValidBeforeMarginSeconds) {
      return refuse('invalid_auth_capture_evm_authorization_expired', `payload.authorization.validBefore ${validBefore} has passed or leaves too little time to settle`);
    }
    if (Number(validAfter) > now) return refuse('invalid_auth_capture_evm_authorization_not_yet_valid', `payload.authorization.validAfter ${validAfter} is in the future`);
  }
  if (before > extra.captureDeadline) {
    return refuse('invalid_auth_capture_evm_deadline_ordering', `payload.authorization.validBefore ${validBefore} is after the capture deadline ${extra.captureDeadline}`);
  }
  if (!sameEvmAddress(to, eip3009TokenCollectorAddress)) {
    return refuse('invalid_auth_capture_evm_token_collector_mismatch', `payload.authorization.to must be the ERC-3009 token collector ${eip3009TokenCollectorAddress}`);
  }
  if (BigInt(value) !== BigInt(requirements.amount)) {
    return refuse('invalid_auth_capture_evm_amount_mismatch', `payload.authorization.value ${value} must be the amount ${requirements.amount}`);
  }
  if (boundSalt(extra.receiverAuthorizer, saltNonce).toLowerCase() !== salt.toLowerCase()) {
    return refuse('invalid_auth_capture_evm_salt_binding_mismatch', 'payload.salt is not the commitment to this receiver authorizer and payload.saltNonce');
  }
  const chainId = chainIdOf(requirements.network);
  const info: PaymentInfo = {
    operator: extra.captureAuthorizer,
    payer: from,
    receiver: requirements.payTo,
    token: requirements.asset,
    maxAmount: requirements.amount,
    preApprovalExpiry: before,
    authorizationExpiry: extra.captureDeadline,
    refundExpiry: extra.refundDeadline,
    minFeeBps: extra.minFeeBps,
    maxFeeBps: extra.maxFeeBps,
    feeReceiver: extra.feeRecipient,
    salt: salt.toLowerCase(),
  };
  if (signatureNonce(chainId, info).toLowerCase() !== nonce.toLowerCase()) {
    return refuse('invalid_auth_capture_evm_nonce_mismatch', 'payload.authorization.nonce is not the payment\'s signature nonce');
  }
  return {
    ok: true,
    payer: from,
    held: { scheme: authCaptureScheme, payment_info: info, salt_nonce: saltNonce.toLowerCase(), payment_info_hash: paymentInfoHash(chainId, info), requirements },
  };
}

const authorizerDomainName = 'x402 Auth Capture Operator';

const captureTypes = {
  Capture: [
    { name: 'paymentInfoHash', type: 'bytes32' },
    { name: 'amount', type: 'uint256' },
    { name: 'feeAmount', type: 'uint256' },
    { name: 'feeReceiver', type: 'address' },
    { name: 'expectedCapturableAmount', type: 'uint256' },
    { name: 'expectedRefundableAmount', type: 'uint256' },
  ],
} as const;
const voidTypes = { Void: [{ name: 'paymentInfoHash', type: 'bytes32' }] } as const;

function authorizerDomain(held: HeldPayment) {
  return { name: authorizerDomainName, version: '1', chainId: chainIdOf(held.requirements.network), verifyingContract: held.payment_info.operator as Hex };
}

/** A `/settle` body's `paymentPayload` for a lifecycle operation, consent signed by the receiver authorizer. A
 * capture of `amount` expects the whole hold still capturable and nothing captured (this service captures once, the
 * released part, before it voids the rest): a capture asked again after it happened can never capture twice. */
export async function lifecyclePayload(
  held: HeldPayment,
  authorizer: PrivateKeyAccount,
  operation: { type: 'capture'; amount: string } | { type: 'void' },
): Promise<PaymentPayloadV2> {
  const common = { paymentInfo: held.payment_info, saltNonce: held.salt_nonce };
  let payload: Record<string, unknown>;
  if (operation.type === 'capture') {
    const terms = {
      amount: operation.amount,
      feeAmount: '0',
      feeReceiver: held.payment_info.feeReceiver,
      expectedCapturableAmount: held.payment_info.maxAmount,
      expectedRefundableAmount: '0',
    };
    const authorizerSignature = await authorizer.signTypedData({
      domain: authorizerDomain(held),
      types: captureTypes,
      primaryType: 'Capture',
      message: {
        paymentInfoHash: held.payment_info_hash as Hex,
        amount: BigInt(terms.amount),
        feeAmount: 0n,
        feeReceiver: terms.feeReceiver as Hex,
        expectedCapturableAmount: BigInt(terms.expectedCapturableAmount),
        expectedRefundableAmount: 0n,
      },
    });
    payload = { type: 'capture', ...common, ...terms, authorizerSignature };
  } else {
    const authorizerSignature = await authorizer.signTypedData({
      domain: authorizerDomain(held),
      types: voidTypes,
      primaryType: 'Void',
      message: { paymentInfoHash: held.payment_info_hash as Hex },
    });
    payload = { type: 'void', ...common, authorizerSignature };
  }
  return { x402Version: 2, accepted: held.requirements, payload } as PaymentPayloadV2;
}

/** The held payment a funding recorded (its `rail_details`), if the funding was an escrow hold. */
export function heldPaymentOf(details: Record<string, unknown>): HeldPayment | undefined {
  const held = details['hold'];
  if (!isPlainObject(held) || held['scheme'] !== authCaptureScheme) return undefined;
  return held as unknown as HeldPayment;
}
