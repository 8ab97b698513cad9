// Checks every receipt the tests read, independently of the service's own signing code: the canonical bytes as
// docs/protocol.md defines them (compact JSON of the signed fields in the order served, Go HTML escaping for the
// protocol receipts and mandates), SHA-256 by @noble/hashes, Ed25519 by @noble/ed25519; and every agent receipt
// against the JSON Schema the service publishes, with ajv (2020-12).
import * as noble from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { agentReceiptJsonSchema } from '../../src/receipts/agent-receipt-schema.ts';

noble.hashes.sha512 = sha512;

const materialFields = new Set(['signing_algorithm', 'message_digest_sha256_hex', 'signing_public_key_ed25519_hex', 'ed25519_signature_hex', 'operator_attestation']);
const htmlEscapedKinds = new Set(['svc.agent_mandate_v1', 'svc.protocol_authorization_receipt_v1', 'svc.protocol_settlement_receipt_v1']);
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The bytes a receipt's digest covers, rebuilt from the wire alone. */
export function independentCanonicalBytes(wire: Record<string, unknown>): Uint8Array {
  const body = Object.fromEntries(Object.entries(wire).filter(([name]) => !materialFields.has(name)));
  let text = JSON.stringify(body);
  if (htmlEscapedKinds.has(wire.kind as string)) {
    text = text.replace(/[&<>\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  return new TextEncoder().encode(text);
}

/** Signature over SHA-256 of the canonical bytes by the embedded key, which must be one of `trustedKeysHex`. */
export function expectIndependentlyVerified(wire: Record<string, unknown>, trustedKeysHex: readonly string[]): void {
  const digest = sha256(independentCanonicalBytes(wire));
  expect(toHex(digest)).toBe(wire.message_digest_sha256_hex);
  expect(trustedKeysHex).toContain(wire.signing_public_key_ed25519_hex);
  const verified = noble.verify(
    Buffer.from(wire.ed25519_signature_hex as string, 'hex'),
    digest,
    Buffer.from(wire.signing_public_key_ed25519_hex as string, 'hex'),
  );
  expect(verified).toBe(true);
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validateAgentReceipt = ajv.compile(agentReceiptJsonSchema('https://svc.test'));
/** How many agent receipts the schema has checked in this test file (a test can assert it saw some). */
export const agentReceiptsChecked = { count: 0 };

/** An agent receipt is valid against the published schema (and so carries no forbidden field). */
export function expectSchemaValidAgentReceipt(wire: unknown): void {
  const valid = validateAgentReceipt(wire);
  expect(validateAgentReceipt.errors ?? [], JSON.stringify(wire)).toEqual([]);
  expect(valid).toBe(true);
  agentReceiptsChecked.count += 1;
}

/** Whether the published schema accepts `wire` (for refusals). */
export const agentReceiptSchemaAccepts = (wire: unknown): boolean => validateAgentReceipt(wire) === true;

/** Every check a test makes of a receipt it read: schema for agent receipts, then the independent signature check. */
export function expectReceipt(wire: Record<string, unknown>, trustedKeysHex: readonly string[]): void {
  if (wire.kind === 'svc.agent_receipt_v1') expectSchemaValidAgentReceipt(wire);
  expectIndependentlyVerified(wire, trustedKeysHex);
}

/** RFC 9162 §2.1.3.2: the root an inclusion proof leads to, compared with `rootHex`. Written here from the RFC, so
 * the tests do not check the log's proofs with the log's own code. */
export function inclusionProofHolds(leafIndex: number, treeSize: number, leafBytes: Uint8Array, proofHex: readonly string[], rootHex: string): boolean {
  if (leafIndex >= treeSize) return false;
  const node = (left: Uint8Array, right: Uint8Array) => sha256(new Uint8Array([1, ...left, ...right]));
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = sha256(new Uint8Array([0, ...leafBytes]));
  for (const hex of proofHex) {
    const p = new Uint8Array(Buffer.from(hex, 'hex'));
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = node(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = node(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && toHex(r) === rootHex;
}
