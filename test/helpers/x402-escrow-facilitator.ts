// A local x402 facilitator for the `auth-capture` scheme on EVM (escrow flow), speaking `/supported`, `/verify` and
// `/settle` as the scheme and its EVM binding specify them (x402 specs/schemes/auth-capture/scheme_auth_capture_evm.md),
// with the escrow contract's state kept in memory in place of the chain. It is the `delegated` operator: its
// `captureAuthorizer` is its own submitter address. What it checks, for real:
// - the collect (`authorize`) payload: the ERC-3009 `ReceiveWithAuthorization` EIP-712 signature recovered to
//   `from`; `to` the v1.1 ERC-3009 token collector; value = amount; deadlines ordered; the bound salt recomputed
//   from `receiverAuthorizer` and `saltNonce`; the nonce recomputed as the payment's `signatureNonce`;
// - lifecycle payloads (`capture`, `void`): operator and salt binding, every `paymentInfo` field against the
//   requirement, the receiver authorizer's EIP-712 `Capture`/`Void` signature, the escrow's preconditions, and the
//   single-use balance check (`expectedCapturableAmount`/`expectedRefundableAmount` against the payment's state);
// - operation-level idempotency: a `/settle` repeated under the same `Idempotency-Key` replays the first answer.
// The hashes here are computed from the binding's text independently of the service's code (src/rails/x402/escrow.ts).
//
// Also here: the client side of a 402, through @x402/core's own client (x402Client + x402HTTPClient), with an
// auth-capture scheme client that signs the ERC-3009 authorization with viem.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentRequirements } from '@x402/core/types';
import { encodeAbiParameters, keccak256, recoverTypedDataAddress, toHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

const escrowV11 = '0x13AC3b34322D12FE27D5e192D0c2b2266d4F29CB';
const collectorV11 = '0xEA902B37036bcb4944577ec2101ABdEDF56EbD28';
const zero = '0x0000000000000000000000000000000000000000';
const usdcOnBase = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

const receiveTypes = {
  ReceiveWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

interface Requirements {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, any>;
}

interface Info {
  operator: string; payer: string; receiver: string; token: string; maxAmount: string; preApprovalExpiry: number;
  authorizationExpiry: number; refundExpiry: number; minFeeBps: number; maxFeeBps: number; feeReceiver: string; salt: string;
}

const infoTypehash = keccak256(toHex('PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps,address feeReceiver,uint256 salt)'));

function hashInfo(chainId: number, info: Info): Hex {
  const inner = keccak256(encodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'uint120' }, { type: 'uint48' },
      { type: 'uint48' }, { type: 'uint48' }, { type: 'uint16' }, { type: 'uint16' }, { type: 'address' }, { type: 'uint256' }],
    [infoTypehash, info.operator as Hex, info.payer as Hex, info.receiver as Hex, info.token as Hex, BigInt(info.maxAmount), info.preApprovalExpiry,
      info.authorizationExpiry, info.refundExpiry, info.minFeeBps, info.maxFeeBps, info.feeReceiver as Hex, BigInt(info.salt)],
  ));
  return keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'address' }, { type: 'bytes32' }], [BigInt(chainId), escrowV11, inner]));
}

function saltFor(receiverAuthorizer: string, saltNonce: string): bigint {
  return BigInt(keccak256(encodeAbiParameters(
    [{ type: 'bytes32' }, { type: 'address' }, { type: 'address' }, { type: 'uint256' }],
    [keccak256(toHex('x402AuthCaptureSaltBinding(address receiverAuthorizer,address policy,uint256 saltNonce)')), receiverAuthorizer as Hex, zero, BigInt(saltNonce)],
  )));
}

const chainIdOf = (network: string) => Number(network.split(':')[1]);

/** The requirement's PaymentInfo for `payer`, salt and preApprovalExpiry (the binding's PaymentInfo appendix). */
function infoFor(requirements: Requirements, payer: string, salt: string, preApprovalExpiry: number): Info {
  const extra = requirements.extra;
  return {
    operator: extra.captureAuthorizer, payer, receiver: requirements.payTo, token: requirements.asset, maxAmount: requirements.amount,
    preApprovalExpiry, authorizationExpiry: Number(extra.captureDeadline), refundExpiry: Number(extra.refundDeadline),
    minFeeBps: Number(extra.minFeeBps), maxFeeBps: Number(extra.maxFeeBps), feeReceiver: extra.feeRecipient, salt,
  };
}

/** The payment's onchain state, as `AuthCaptureEscrow.paymentState` would answer it. */
export interface EscrowPayment {
  readonly paymentInfoHash: string;
  readonly payer: string;
  readonly receiver: string;
  capturable: bigint;
  refundable: bigint;
  /** Transactions, by operation, in order. */
  readonly transactions: { authorize: string[]; capture: string[]; void: string[] };
  /** Tokens moved: to the receiver (captured) and back to the payer (voided). */
  paidToReceiver: bigint;
  returnedToPayer: bigint;
}

export interface EscrowFacilitator {
  readonly url: string;
  /** The facilitator's submitter address: the `captureAuthorizer` a delegated server copies. */
  readonly captureAuthorizer: string;
  readonly payments: Map<string, EscrowPayment>;
  /** Every /settle call (with its operation and idempotency key), in order. */
  readonly settles: Array<{ operation: string; idempotencyKey: string | undefined; paymentInfoHash: string | undefined }>;
  close(): Promise<void>;
}

export async function startEscrowFacilitator(options: { apiKey?: string; network?: string } = {}): Promise<EscrowFacilitator> {
  const network = options.network ?? 'eip155:8453';
  const submitter = privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`).address;
  const payments = new Map<string, EscrowPayment>();
  const settles: EscrowFacilitator['settles'] = [];
  const replays = new Map<string, { status: number; body: unknown }>();
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const transaction = (label: string) => `0x${createHash('sha256').update(`${label}:${randomBytes(8).toString('hex')}`).digest('hex')}`;

  function checkRequirements(requirements: Requirements): string | undefined {
    const extra = requirements.extra ?? {};
    if (requirements.scheme !== 'auth-capture') return 'invalid_auth_capture_evm_scheme';
    if (requirements.network !== network) return 'invalid_auth_capture_evm_network_mismatch';
    for (const field of ['captureAuthorizer', 'captureDeadline', 'refundDeadline', 'feeRecipient', 'minFeeBps', 'maxFeeBps', 'name', 'version']) {
      if (extra[field] === undefined) return 'invalid_auth_capture_evm_extra';
    }
    if (extra.authCaptureEscrow !== undefined && extra.authCaptureEscrow.toLowerCase() !== escrowV11.toLowerCase()) return 'invalid_auth_capture_evm_extra';
    if ((extra.operatorType ?? 'delegated') !== 'delegated') return 'invalid_auth_capture_evm_unsupported_operator_type';
    if (String(extra.captureAuthorizer).toLowerCase() !== submitter.toLowerCase()) return 'invalid_auth_capture_evm_operator_not_admitted';
    if ((extra.paymentFlow ?? 'escrow') !== 'escrow') return 'invalid_auth_capture_evm_unsupported_payment_flow';
    if (Number(extra.refundDeadline) < Number(extra.captureDeadline)) return 'invalid_auth_capture_evm_deadline_ordering';
    return undefined;
  }

  /** The collect payload's checks (binding "Verification", client payment payload). */
  async function verifyCollect(payload: any, requirements: Requirements): Promise<{ ok: true; info: Info; hash: string } | { ok: false; reason: string }> {
    const refused = checkRequirements(requirements);
    if (refused) return { ok: false, reason: refused };
    const { authorization, signature, salt, saltNonce } = payload.payload ?? {};
    if (!authorization || typeof signature !== 'string' || typeof salt !== 'string' || typeof saltNonce !== 'string') return { ok: false, reason: 'invalid_auth_capture_evm_payload_format' };
    if (JSON.stringify(sorted(payload.accepted)) !== JSON.stringify(sorted(requirements))) return { ok: false, reason: 'invalid_auth_capture_evm_payload_format' };
    const now = nowSeconds();
    const extra = requirements.extra;
    if (Number(extra.captureDeadline) <= now + 6) return { ok: false, reason: 'invalid_auth_capture_evm_capture_deadline_expired' };
    if (now + requirements.maxTimeoutSeconds > Number(extra.captureDeadline) || Number(authorization.validBefore) > Number(extra.captureDeadline)) {
      return { ok: false, reason: 'invalid_auth_capture_evm_deadline_ordering' };
    }
    if (Number(authorization.validBefore) <= now + 6) return { ok: false, reason: 'invalid_auth_capture_evm_authorization_expired' };
    if (Number(authorization.validAfter) > now) return { ok: false, reason: 'invalid_auth_capture_evm_authorization_not_yet_valid' };
    if (String(authorization.to).toLowerCase() !== collectorV11.toLowerCase()) return { ok: false, reason: 'invalid_auth_capture_evm_token_collector_mismatch' };
    const chainId = chainIdOf(requirements.network);
    const signer = await recoverTypedDataAddress({
      domain: { name: extra.name, version: extra.version, chainId, verifyingContract: requirements.asset as Hex },
      types: receiveTypes,
      primaryType: 'ReceiveWithAuthorization',
      message: {
        from: authorization.from, to: authorization.to, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore), nonce: authorization.nonce,
      },
      signature: signature as Hex,
    }).catch(() => undefined);
    if (!signer || signer.toLowerCase() !== String(authorization.from).toLowerCase()) return { ok: false, reason: 'invalid_auth_capture_evm_signature' };
    if (BigInt(authorization.value) !== BigInt(requirements.amount)) return { ok: false, reason: 'invalid_auth_capture_evm_amount_mismatch' };
    if (BigInt(salt) !== saltFor(extra.receiverAuthorizer, saltNonce)) return { ok: false, reason: 'invalid_auth_capture_evm_salt_binding_mismatch' };
    const info = infoFor(requirements, authorization.from, salt, Number(authorization.validBefore));
    if (hashInfo(chainId, { ...info, payer: zero }).toLowerCase() !== String(authorization.nonce).toLowerCase()) return { ok: false, reason: 'invalid_auth_capture_evm_nonce_mismatch' };
    return { ok: true, info, hash: hashInfo(chainId, info) };
  }

  /** A lifecycle payload's checks (binding "Verification", lifecycle payloads) and its effect on the payment. */
  async function settleLifecycle(payload: any, requirements: Requirements): Promise<{ status: number; body: unknown }> {
    const fail = (reason: string) => ({ status: 400, body: { success: false, errorReason: reason, transaction: '', network } });
    const refused = checkRequirements(requirements);
    if (refused) return fail(refused);
    const body = payload.payload ?? {};
    const extra = requirements.extra;
    if (!extra.receiverAuthorizer || extra.receiverAuthorizer === zero) return fail('invalid_auth_capture_evm_lifecycle_not_relayed');
    const info = body.paymentInfo as Info;
    if (!info || String(info.operator).toLowerCase() !== String(extra.captureAuthorizer).toLowerCase()) return fail('invalid_auth_capture_evm_operator_mismatch');
    if (BigInt(info.salt) !== saltFor(extra.receiverAuthorizer, body.saltNonce)) return fail('invalid_auth_capture_evm_salt_binding_mismatch');
    const expected = infoFor(requirements, info.payer, info.salt, info.preApprovalExpiry);
    if (JSON.stringify(sorted(expected)) !== JSON.stringify(sorted({ ...info, maxAmount: String(info.maxAmount) }))) return fail('invalid_auth_capture_evm_payload_format');
    const chainId = chainIdOf(requirements.network);
    const hash = hashInfo(chainId, info);
    const domain = { name: 'x402 Auth Capture Operator', version: '1', chainId, verifyingContract: extra.captureAuthorizer as Hex };
    const payment = payments.get(hash);
    if (body.type === 'capture') {
      const signer = await recoverTypedDataAddress({
        domain,
        types: { Capture: [{ name: 'paymentInfoHash', type: 'bytes32' }, { name: 'amount', type: 'uint256' }, { name: 'feeAmount', type: 'uint256' },
          { name: 'feeReceiver', type: 'address' }, { name: 'expectedCapturableAmount', type: 'uint256' }, { name: 'expectedRefundableAmount', type: 'uint256' }] },
        primaryType: 'Capture',
        message: { paymentInfoHash: hash, amount: BigInt(body.amount), feeAmount: BigInt(body.feeAmount), feeReceiver: body.feeReceiver,
          expectedCapturableAmount: BigInt(body.expectedCapturableAmount), expectedRefundableAmount: BigInt(body.expectedRefundableAmount) },
        signature: body.authorizerSignature,
      }).catch(() => undefined);
      if (!signer || signer.toLowerCase() !== String(extra.receiverAuthorizer).toLowerCase()) return fail('invalid_auth_capture_evm_authorizer_signature');
      if (!payment) return fail('invalid_auth_capture_evm_simulation_failed');
      if (nowSeconds() >= info.authorizationExpiry) return fail('invalid_auth_capture_evm_capture_deadline_expired');
      if (payment.capturable !== BigInt(body.expectedCapturableAmount) || payment.refundable !== BigInt(body.expectedRefundableAmount)) {
        return fail('invalid_auth_capture_evm_unexpected_payment_state');
      }
      const amount = BigInt(body.amount);
      if (amount <= 0n || amount > payment.capturable) return fail('invalid_auth_capture_evm_insufficient_authorization');
      if (BigInt(body.feeAmount) !== 0n) return fail('invalid_auth_capture_evm_fee_bps_out_of_range');
      payment.capturable -= amount;
      payment.refundable += amount;
      payment.paidToReceiver += amount;
      const tx = transaction('capture');
      payment.transactions.capture.push(tx);
      return { status: 200, body: { success: true, transaction: tx, network, payer: info.payer, amount: String(amount) } };
    }
    if (body.type === 'void') {
      const signer = await recoverTypedDataAddress({
        domain, types: { Void: [{ name: 'paymentInfoHash', type: 'bytes32' }] }, primaryType: 'Void', message: { paymentInfoHash: hash }, signature: body.authorizerSignature,
      }).catch(() => undefined);
      if (!signer || signer.toLowerCase() !== String(extra.receiverAuthorizer).toLowerCase()) return fail('invalid_auth_capture_evm_authorizer_signature');
      if (!payment || payment.capturable === 0n) return fail('invalid_auth_capture_evm_zero_authorization');
      const returned = payment.capturable;
      payment.capturable = 0n;
      payment.returnedToPayer += returned;
      const tx = transaction('void');
      payment.transactions.void.push(tx);
      return { status: 200, body: { success: true, transaction: tx, network, payer: info.payer, amount: '0' } };
    }
    return fail('invalid_auth_capture_evm_payload_type');
  }

  /** The hold a lifecycle payload (capture, void) names, as the escrow hashes its PaymentInfo; undefined for a collect
   * or a payload too malformed to hash (its /settle refuses it). */
  function lifecycleHashOf(payload: any, requirements: Requirements): string | undefined {
    const info = payload.payload?.type === undefined ? undefined : (payload.payload?.paymentInfo as Info | undefined);
    try {
      return info ? hashInfo(chainIdOf(requirements.network), info) : undefined;
    } catch {
      return undefined;
    }
  }

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const path = (request.url ?? '').split('?')[0]!;
        const send = (status: number, body: unknown) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        };
        if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) return send(401, { error: 'unauthorized' });
        if (request.method === 'GET' && path === '/supported') {
          return send(200, {
            kinds: [{ x402Version: 2, scheme: 'auth-capture', network, extra: { captureAuthorizer: submitter, minFeeBps: 0, maxFeeBps: 0 } }],
            extensions: [],
            signers: { 'eip155:*': [submitter] },
          });
        }
        if (request.method !== 'POST' || (path !== '/verify' && path !== '/settle')) return send(404, { error: 'not found' });
        const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        if (!paymentPayload || !paymentRequirements) return send(400, { error: 'paymentPayload and paymentRequirements are required' });
        const type = paymentPayload.payload?.type as string | undefined;
        if (path === '/verify') {
          if (type !== undefined) return send(200, { isValid: false, invalidReason: 'invalid_auth_capture_evm_payload_type' });
          const verdict = await verifyCollect(paymentPayload, paymentRequirements);
          return send(200, verdict.ok ? { isValid: true, payer: verdict.info.payer } : { isValid: false, invalidReason: verdict.reason });
        }
        const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
        const replay = idempotencyKey ? replays.get(idempotencyKey) : undefined;
        settles.push({ operation: type ?? 'authorize', idempotencyKey, paymentInfoHash: lifecycleHashOf(paymentPayload, paymentRequirements) });
        if (replay) return send(replay.status, replay.body);
        let answer: { status: number; body: unknown };
        if (type === undefined) {
          const verdict = await verifyCollect(paymentPayload, paymentRequirements);
          if (!verdict.ok) {
            answer = { status: 400, body: { success: false, errorReason: verdict.reason, transaction: '', network } };
          } else {
            const existing = payments.get(verdict.hash);
            if (existing) {
              // The same authorization again: the escrow has it already (PaymentAlreadyCollected); its transaction answers.
              answer = { status: 200, body: { success: true, transaction: existing.transactions.authorize[0], network, payer: existing.payer, amount: paymentRequirements.amount } };
            } else {
              const tx = transaction('authorize');
              payments.set(verdict.hash, {
                paymentInfoHash: verdict.hash, payer: verdict.info.payer, receiver: verdict.info.receiver, capturable: BigInt(paymentRequirements.amount), refundable: 0n,
                transactions: { authorize: [tx], capture: [], void: [] }, paidToReceiver: 0n, returnedToPayer: 0n,
              });
              answer = { status: 200, body: { success: true, transaction: tx, network, payer: verdict.info.payer, amount: paymentRequirements.amount } };
            }
          }
        } else {
          answer = await settleLifecycle(paymentPayload, paymentRequirements);
        }
        if (idempotencyKey) replays.set(idempotencyKey, answer);
        return send(answer.status, answer.body);
      })().catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: String(error) }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    captureAuthorizer: submitter,
    payments,
    settles,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, member]) => [key, sorted(member)]));
  }
  return value;
}

/** The client's scheme: an auth-capture payment (escrow flow, ERC-3009) signed by `account`, as the binding's
 * "Client payment payload" builds it: a fresh saltNonce, the bound salt, the payment's signatureNonce. */
class AuthCaptureClientScheme {
  readonly scheme = 'auth-capture';
  constructor(private readonly account: PrivateKeyAccount) {}

  async createPaymentPayload(x402Version: number, requirements: PaymentRequirements) {
    const req = requirements as unknown as Requirements;
    const extra = req.extra;
    const chainId = chainIdOf(req.network);
    const saltNonce = toHex(randomBytes(32));
    const salt = toHex(saltFor(extra.receiverAuthorizer ?? zero, saltNonce), { size: 32 });
    const validBefore = Math.min(Math.floor(Date.now() / 1000) + req.maxTimeoutSeconds, Number(extra.captureDeadline));
    const nonce = hashInfo(chainId, { ...infoFor(req, zero, salt, validBefore) });
    const authorization = { from: this.account.address, to: collectorV11, value: req.amount, validAfter: '0', validBefore: String(validBefore), nonce };
    const signature = await this.account.signTypedData({
      domain: { name: extra.name, version: extra.version, chainId, verifyingContract: req.asset as Hex },
      types: receiveTypes,
      primaryType: 'ReceiveWithAuthorization',
      message: { from: authorization.from, to: collectorV11, value: BigInt(req.amount), validAfter: 0n, validBefore: BigInt(validBefore), nonce },
    });
    return { x402Version, payload: { authorization, signature, salt, saltNonce } };
  }
}

/** A client's answer to a PAYMENT-REQUIRED header through @x402/core's client: the `payment-signature` header. */
export async function signEscrowPayment(paymentRequiredHeader: string, account: PrivateKeyAccount, network = 'eip155:8453'): Promise<string> {
  // The scheme client knows no default asset table for USDC here: the payer allows Base USDC explicitly, capped at
  // what a test intent costs.
  const client = new x402Client()
    .register(network as `${string}:${string}`, new AuthCaptureClientScheme(account))
    .setSpendControls({ allowedAssets: [{ network: network as `${string}:${string}`, asset: usdcOnBase, maxAmountPerPayment: '100000000' }] });
  const http = new x402HTTPClient(client);
  const paymentRequired = http.getPaymentRequiredResponse((name) => (name.toLowerCase() === 'payment-required' ? paymentRequiredHeader : null));
  const payload = await client.createPaymentPayload(paymentRequired);
  const headers = http.encodePaymentSignatureHeader(payload);
  return Object.values(headers)[0]!;
}
