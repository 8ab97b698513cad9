// Contracts of the public discovery documents under /.well-known: the gateway's JWKS, the keys that sign receipts
// (in the form the public client's verifiers take them), this deployment's A2A agent card, and the JSON Schema of
// agent receipts. The card and the schema are documents defined elsewhere (the A2A
// protocol, JSON Schema 2020-12), answered as built: described here as open objects.
import Type, { type Static } from 'typebox';
import { OpenObject } from './common.ts';

/** An Ed25519 public key of the gateway as a JWK (RFC 8037). */
export const GatewayJwk = Type.Object({
  kty: Type.Literal('OKP'),
  crv: Type.Literal('Ed25519'),
  x: Type.String({ description: 'The public key, base64url.' }),
  kid: Type.String(),
  alg: Type.Literal('EdDSA'),
  use: Type.Literal('sig'),
});
export type GatewayJwk = Static<typeof GatewayJwk>;

/** The active and retired-but-published keys, for verifying the session, download and capability JWTs. */
export const GatewayJwks = Type.Object({ keys: Type.Array(GatewayJwk) });
export type GatewayJwks = Static<typeof GatewayJwks>;

export const AgentCard = OpenObject('The A2A agent card of this deployment (A2A protocol AgentCard, JSON form).');
export type AgentCard = Static<typeof AgentCard>;

export const AgentReceiptJsonSchema = OpenObject('The JSON Schema (2020-12) of svc.agent_receipt_v1.');
export type AgentReceiptJsonSchema = Static<typeof AgentReceiptJsonSchema>;

/** One key that signs receipts and tree heads: the 32-byte public key as the artifacts carry it, and where it stands. */
export const ReceiptSigningKey = Type.Object(
  {
    kid: Type.String({ description: 'The key id, as in the JWKS.' }),
    signing_public_key_ed25519_hex: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('next'), Type.Literal('retired')], {
      description: 'active signs now; next is published before it signs; retired is published so that what it signed still verifies offline.',
    }),
  },
  { additionalProperties: false },
);
export type ReceiptSigningKey = Static<typeof ReceiptSigningKey>;

/** GET /.well-known/agent-receipt-signing-keys.json (docs/protocol.md#discovery). */
export const ReceiptSigningKeys = Type.Object(
  {
    schema_version: Type.Literal(1),
    kind: Type.Literal('svc.agent_receipt_signing_keys_v1'),
    issuer: Type.String({ description: 'The public base URL of this deployment.' }),
    signing_algorithm: Type.Literal('ed25519-sha256-json-v1'),
    artifact_kinds: Type.Array(Type.String(), { description: 'The kinds these keys sign.' }),
    jwks_uri: Type.String(),
    keys: Type.Array(ReceiptSigningKey),
  },
  { additionalProperties: false },
);
export type ReceiptSigningKeys = Static<typeof ReceiptSigningKeys>;
