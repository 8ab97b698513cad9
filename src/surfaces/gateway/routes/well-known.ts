// Public discovery documents (docs/protocol.md#discovery): the JSON Schema of agent receipts at
// /.well-known/agent-receipt-v1.json, the keys that sign receipts at /.well-known/agent-receipt-signing-keys.json, and
// this deployment's A2A agent card at /.well-known/agent-card.json. Each names the service by its public base URL
// (SVC_PUBLIC_URL, else the address the request came to).
import { A2A_PROTOCOL_VERSION, AgentCard } from '@a2a-js/sdk';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { publicErrors } from '../../../contracts/common.ts';
import { AgentCard as AgentCardDocument, AgentReceiptJsonSchema, ReceiptSigningKeys } from '../../../contracts/well-known.ts';
import type { GatewayKeyring } from '../../../infra/gateway-keys.ts';
import { artifactSignatureAlgorithm } from '../../../signing/artifact-kinds.ts';
import { publicBaseUrlOf } from '../../../config.ts';
import { agentReceiptJsonSchema } from '../../../receipts/agent-receipt-schema.ts';

/** The service's version as the card states it. */
export const agentCardVersion = '1.0.0';

/** The card, typed by the A2A SDK's own `AgentCard`, so a field the protocol does not have fails to compile. */
export function agentCardFor(baseUrl: string): AgentCard {
  const bearer = 'svc_api_key';
  const needsKey = [{ schemes: { [bearer]: { list: [] } } }];
  return {
    name: 'svc settlement gateway',
    description:
      'Escrow for AI agents\' paid tool calls: an intent holds the principal\'s money under a signed release rule, the payee\'s '
      + 'evidence releases it, and every step is proven by receipts signed by this gateway and published on a per-tenant '
      + 'transparency log.',
    supportedInterfaces: [{ url: `${baseUrl}/protocol/v2/a2a`, protocolBinding: 'HTTP+JSON', protocolVersion: A2A_PROTOCOL_VERSION, tenant: '' }],
    provider: { url: baseUrl, organization: 'svc' },
    version: agentCardVersion,
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      [bearer]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { description: 'An API key of the tenant (svc_sk_… or a restricted svc_rk_…) as a Bearer token.', scheme: 'Bearer', bearerFormat: 'svc API key' },
        },
      },
    },
    securityRequirements: needsKey,
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: 'paid_tool_escrow',
        name: 'Paid-tool escrow',
        description: 'Holds a spend for a tool call in escrow until completion evidence satisfies the intent\'s release rule, then releases it to the payee or refunds the principal.',
        tags: ['escrow', 'payments', 'settlement', 'x402', 'mpp'],
        examples: ['Reserve 5 USD for a web search and pay the tool only when it returns results.'],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
        securityRequirements: needsKey,
      },
      {
        id: 'task_contracts',
        name: 'Task contracts',
        description: 'Lists the tenant\'s intents as contracts a peer can read before taking the task: rule, amount, deadline, allowed tools and payee (GET /protocol/v2/a2a/task-contracts).',
        tags: ['a2a', 'contracts'],
        examples: [],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
        securityRequirements: needsKey,
      },
      {
        id: 'signed_receipts',
        name: 'Signed receipts',
        description: 'Mandate authorization, settlement and agent receipts, each verifiable offline and included in the tenant\'s transparency log.',
        tags: ['receipts', 'audit', 'transparency-log'],
        examples: [],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
        securityRequirements: needsKey,
      },
    ],
    signatures: [],
  };
}

/** The kinds this deployment's gateway keys sign, as the signing-keys document lists them. */
export const gatewaySignedArtifactKinds = [
  'svc.protocol_authorization_receipt_v1',
  'svc.protocol_settlement_receipt_v1',
  'svc.review_resolution_receipt_v1',
  'svc.agent_receipt_v1',
  'svc.agent_receipt_transparency_sth_v1',
  'svc.transparency_tree_head_v1',
  'svc.audit_export_manifest_v1',
] as const;

/** The signing-keys document: every published key as receipts carry it (lowercase hex), with its rotation status, so
 * that a verifier can pin the keys it trusts (the public client's `expectedSigningPublicKeys`). */
export function receiptSigningKeysFor(keyring: GatewayKeyring, baseUrl: string): ReceiptSigningKeys {
  return {
    schema_version: 1,
    kind: 'svc.agent_receipt_signing_keys_v1',
    issuer: baseUrl,
    signing_algorithm: artifactSignatureAlgorithm,
    artifact_kinds: [...gatewaySignedArtifactKinds],
    jwks_uri: `${baseUrl}/.well-known/jwks.json`,
    keys: keyring.verificationKeys.map((key) => ({ kid: key.kid, signing_public_key_ed25519_hex: key.publicKeyHex, status: key.status })),
  };
}

/** The signing keys change with a rotation: cached as briefly as the JWKS. */
const signingKeysCacheControl = 'public, max-age=300';

/** Discovery documents change only with a deploy: cacheable for an hour, as the A2A SDK's own card handler does. */
const cacheControl = 'public, max-age=3600';

export async function wellKnownRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const config = { access: { public: true } } as const;

  routes.get(
    '/.well-known/agent-card.json',
    { config, schema: { summary: 'The A2A agent card of this deployment', response: { 200: AgentCardDocument, ...publicErrors() } } },
    async (request, reply) => {
      reply.header('cache-control', cacheControl);
      return AgentCard.toJSON(agentCardFor(publicBaseUrlOf(app.publicBaseUrl, request))) as AgentCardDocument;
    },
  );

  routes.get(
    '/.well-known/agent-receipt-signing-keys.json',
    { config, schema: { summary: 'The keys that sign receipts and tree heads', response: { 200: ReceiptSigningKeys, ...publicErrors() } } },
    async (request, reply) => {
      reply.header('cache-control', signingKeysCacheControl);
      return receiptSigningKeysFor(app.gatewayKeys, publicBaseUrlOf(app.publicBaseUrl, request));
    },
  );

  // Served as application/schema+json; the contract is the document's JSON shape.
  routes.get(
    '/.well-known/agent-receipt-v1.json',
    { config, schema: { summary: 'The JSON Schema of agent receipts', response: { 200: AgentReceiptJsonSchema, ...publicErrors() } } },
    async (request, reply) => {
      reply.header('cache-control', cacheControl);
      reply.type('application/schema+json');
      return agentReceiptJsonSchema(publicBaseUrlOf(app.publicBaseUrl, request));
    },
  );
}
