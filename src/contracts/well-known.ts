// Contracts of the public discovery documents under /.well-known: the gateway's JWKS, this deployment's A2A agent
// card, and the JSON Schema of agent receipts. The card and the schema are documents defined elsewhere (the A2A
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
