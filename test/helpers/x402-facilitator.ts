// A local x402 facilitator for the live x402 tests: an HTTP server speaking `/verify`, `/settle` and `/supported`
// as the x402 v2 specification documents them (request `{ x402Version, paymentPayload, paymentRequirements }`;
// answers VerifyResponse, SettleResponse, SupportedResponse as @x402/core's schemas read them), that verifies the
// `exact` EVM payload for real: the EIP-3009 TransferWithAuthorization's EIP-712 signature is recovered and must be
// the authorization's `from`. What it does then is scripted by payer address. A settled authorization is recorded
// once per nonce, as the chain would; settling it again answers the recorded transaction (a facilitator's
// reconciliation of a repeated settle), so the tests can count settlements.
//
// Also here: what a client does with a 402 — signing a real EIP-3009 authorization for a PAYMENT-REQUIRED header.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { recoverTypedDataAddress, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

export type FacilitatorScript =
  | 'success'
  | 'insufficient_funds'
  | 'server_error'
  /** /settle records the settlement, then answers only after `hangMs` (past the service's call deadline). */
  | 'timeout_then_settled'
  /** The first /settle answers `settlement_pending` with the broadcast transaction; the next one, success. */
  | 'pending_then_settled';

export interface Settlement {
  readonly nonce: string;
  readonly payer: string;
  readonly to: string;
  readonly value: string;
  readonly transaction: string;
}

export interface FacilitatorRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly payer: string | undefined;
}

export interface X402Facilitator {
  readonly url: string;
  readonly settlements: Settlement[];
  readonly requests: FacilitatorRequest[];
  script(payer: string, script: FacilitatorScript): void;
  /** Every /supported, /verify and /settle answers 503 while set (a facilitator down). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
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
  extra: { name: string; version: string } & Record<string, unknown>;
}

interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

interface Payload {
  x402Version: number;
  accepted: Requirements;
  payload: { signature: string; authorization: Authorization };
}

/** JSON with object keys sorted: the same value whatever order its sender wrote the keys in. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    member && typeof member === 'object' && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member);
}

function domainOf(requirements: Requirements) {
  return {
    name: requirements.extra.name,
    version: requirements.extra.version,
    chainId: Number(requirements.network.split(':')[1]),
    verifyingContract: requirements.asset as Hex,
  };
}

function messageOf(authorization: Authorization) {
  return {
    from: authorization.from as Hex,
    to: authorization.to as Hex,
    value: BigInt(authorization.value),
    validAfter: BigInt(authorization.validAfter),
    validBefore: BigInt(authorization.validBefore),
    nonce: authorization.nonce as Hex,
  };
}

/** A client's answer to a 402: a real EIP-3009 authorization for the challenge, signed by `account` (or by
 * `signer` while claiming to be `account`, for an invalid signature). Standard base64 of the PaymentPayload. */
export async function signX402Payment(
  paymentRequiredHeader: string,
  account: PrivateKeyAccount,
  options: { signer?: PrivateKeyAccount; value?: string; nonce?: string; nowMs?: number } = {},
): Promise<string> {
  const paymentRequired = JSON.parse(Buffer.from(paymentRequiredHeader, 'base64').toString('utf8')) as { resource: unknown; accepts: Requirements[] };
  const requirements = paymentRequired.accepts[0]!;
  const now = Math.floor((options.nowMs ?? Date.now()) / 1000);
  const authorization: Authorization = {
    from: account.address,
    to: requirements.payTo,
    value: options.value ?? requirements.amount,
    validAfter: String(now - 60),
    validBefore: String(now + requirements.maxTimeoutSeconds),
    nonce: options.nonce ?? `0x${randomBytes(32).toString('hex')}`,
  };
  const signature = await (options.signer ?? account).signTypedData({
    domain: domainOf(requirements),
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: messageOf(authorization),
  });
  const payload = { x402Version: 2, resource: paymentRequired.resource, accepted: requirements, payload: { signature, authorization } };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

export function testAccount(): PrivateKeyAccount {
  return privateKeyToAccount(`0x${randomBytes(32).toString('hex')}`);
}

export async function startX402Facilitator(options: { apiKey?: string; network?: string; hangMs?: number } = {}): Promise<X402Facilitator> {
  const network = options.network ?? 'eip155:8453';
  const hangMs = options.hangMs ?? 2_000;
  const scripts = new Map<string, FacilitatorScript>();
  const settled = new Map<string, Settlement & { signature: string }>();
  const pendingOnce = new Set<string>();
  const settlements: Settlement[] = [];
  const requests: FacilitatorRequest[] = [];
  let down = false;

  /** The payload's verdict: the checks a facilitator makes, the signature recovered for real. */
  async function verify(payload: Payload, requirements: Requirements): Promise<{ isValid: boolean; invalidReason?: string; payer?: string }> {
    const authorization = payload.payload?.authorization;
    const payer = authorization?.from;
    if (payload.x402Version !== 2 || requirements.scheme !== 'exact' || requirements.network !== network) {
      return { isValid: false, invalidReason: 'unsupported_scheme', payer };
    }
    if (sortedJson(payload.accepted) !== sortedJson(requirements)) return { isValid: false, invalidReason: 'invalid_payment_requirements', payer };
    if (!authorization || typeof payload.payload.signature !== 'string') return { isValid: false, invalidReason: 'invalid_payload', payer };
    if (authorization.to.toLowerCase() !== requirements.payTo.toLowerCase()) {
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_recipient_mismatch', payer };
    }
    // As the x402 reference facilitator: validBefore leaves a block's time (6 s), validAfter has come, and the
    // `exact` scheme's value is the amount, no more and no less.
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (BigInt(authorization.validBefore) < now + 6n) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_before', payer };
    if (BigInt(authorization.validAfter) > now) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_after', payer };
    if (BigInt(authorization.value) !== BigInt(requirements.amount)) {
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch', payer };
    }
    let signer: string;
    try {
      signer = await recoverTypedDataAddress({
        domain: domainOf(requirements),
        types: transferWithAuthorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: messageOf(authorization),
        signature: payload.payload.signature as Hex,
      });
    } catch {
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer };
    }
    if (signer.toLowerCase() !== authorization.from.toLowerCase()) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer };
    if (scripts.get(authorization.from.toLowerCase()) === 'insufficient_funds') return { isValid: false, invalidReason: 'insufficient_funds', payer };
    return { isValid: true, payer };
  }

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const path = (request.url ?? '').split('?')[0]!;
        const send = (status: number, body: unknown) => {
          if (response.destroyed) return;
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        };
        let body: { paymentPayload?: Payload; paymentRequirements?: Requirements } = {};
        try {
          if (chunks.length > 0) body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          send(400, { error: 'invalid JSON' });
          return;
        }
        const payer = body.paymentPayload?.payload?.authorization?.from;
        requests.push({ method: request.method ?? '', path, authorization: request.headers.authorization, payer });
        if (down) return send(503, { error: 'unavailable' });
        if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) return send(401, { error: 'unauthorized' });
        if (request.method === 'GET' && path === '/supported') {
          return send(200, { kinds: [{ x402Version: 2, scheme: 'exact', network }], extensions: [], signers: { 'eip155:*': ['0x000000000000000000000000000000000000fac1'] } });
        }
        if (request.method !== 'POST' || (path !== '/verify' && path !== '/settle')) return send(404, { error: 'not found' });
        const { paymentPayload, paymentRequirements } = body;
        if (!paymentPayload || !paymentRequirements) return send(400, { error: 'paymentPayload and paymentRequirements are required' });
        const script = payer ? scripts.get(payer.toLowerCase()) ?? 'success' : 'success';
        if (script === 'server_error') return send(500, { error: 'internal error' });
        const authorization = paymentPayload.payload?.authorization;
        const previous = authorization ? settled.get(authorization.nonce.toLowerCase()) : undefined;

        if (path === '/verify') {
          if (previous) return send(200, { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', payer });
          return send(200, await verify(paymentPayload, paymentRequirements));
        }
        // /settle: an authorization already on chain answers its transaction (the same payload), or fails.
        if (previous) {
          if (previous.signature !== paymentPayload.payload.signature) {
            return send(400, { success: false, errorReason: 'invalid_exact_evm_nonce_already_used', transaction: '', network, payer });
          }
          return send(200, { success: true, transaction: previous.transaction, network, payer: previous.payer, amount: previous.value });
        }
        const verdict = await verify(paymentPayload, paymentRequirements);
        if (!verdict.isValid) return send(400, { success: false, errorReason: verdict.invalidReason, transaction: '', network, payer });
        const transaction = `0x${createHash('sha256').update(`x402-test:${authorization!.nonce}`).digest('hex')}`;
        const settlement = { nonce: authorization!.nonce, payer: authorization!.from, to: authorization!.to, value: authorization!.value, transaction };
        settled.set(authorization!.nonce.toLowerCase(), { ...settlement, signature: paymentPayload.payload.signature });
        settlements.push(settlement);
        if (script === 'pending_then_settled' && !pendingOnce.has(authorization!.nonce)) {
          pendingOnce.add(authorization!.nonce);
          // Broadcast, not yet confirmed: the next settle of the same payload answers success.
          settled.delete(authorization!.nonce.toLowerCase());
          settlements.pop();
          return send(200, { success: false, errorReason: 'settlement_pending', transaction, network, payer });
        }
        if (script === 'timeout_then_settled') await new Promise((resolve) => setTimeout(resolve, hangMs));
        return send(200, { success: true, transaction, network, payer, amount: authorization!.value });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    settlements,
    requests,
    script(payer, script) {
      scripts.set(payer.toLowerCase(), script);
    },
    setDown(value) {
      down = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
