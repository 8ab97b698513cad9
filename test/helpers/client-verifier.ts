// An offline verifier of the artifacts the public client verifies
// (docs/wire-compatibility.md#artifacts-the-client-verifies), written from the client's documented format and
// independent of the service's signing code: protocol
// authorization and settlement receipts, agent receipts, signed tree heads and inclusion proofs. Like the client, it
// first normalizes what it reads (trims, lowercases, drops empty optional fields) and refuses what the format does not
// allow, then rebuilds the canonical bytes in the kind's fixed field order, hashes them with SHA-256 (@noble/hashes)
// and checks the Ed25519 signature over the 32 digest bytes (@noble/ed25519). A receipt the service signed in any
// other form than the client rebuilds fails here, as it would there.
import * as noble from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';

noble.hashes.sha512 = sha512;

export const clientKinds = {
  authorization: 'svc.protocol_authorization_receipt_v1',
  settlement: 'svc.protocol_settlement_receipt_v1',
  agent: 'svc.agent_receipt_v1',
  treeHead: 'svc.agent_receipt_transparency_sth_v1',
  inclusionProof: 'svc.agent_receipt_transparency_inclusion_proof_v1',
} as const;
const algorithm = 'ed25519-sha256-json-v1';

const token = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;
const hex64 = /^[0-9a-f]{64}$/;
const hex128 = /^[0-9a-f]{128}$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const tenant = /^[a-z0-9][a-z0-9._-]*$/;
const mandateCurrency = /^[a-z0-9_]{3,16}$/;
const isoCurrency = /^[a-z]{3}$/;
const terminalStates = new Set(['released', 'refunded', 'resolved_split', 'escalated_external']);
const forbiddenAgentReceiptFields = new Set(['user_prompt', 'system_prompt', 'tool_arguments', 'tool_results', 'evidence_payload', 'payee_signature']);

type Json = Record<string, unknown>;

export class ClientRefusal extends Error {}
function refuse(message: string): never {
  throw new ClientRefusal(message);
}

const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const fromHex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
const strs = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** A time as the client writes it after parsing: UTC, rounded down to the second, no fraction. */
function seconds(value: unknown, field: string): string {
  const parsed = new Date(str(value).trim());
  if (str(value).trim() === '' || Number.isNaN(parsed.getTime())) refuse(`${field} is required`);
  return parsed.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function scopeToken(value: unknown, field: string): string {
  const text = str(value).trim().toLowerCase();
  if (!token.test(text)) refuse(`${field} ${JSON.stringify(text)} is not canonical`);
  return text;
}

function digest(value: unknown, field: string): string {
  const text = str(value).trim().toLowerCase();
  if (!hex64.test(text)) refuse(`${field} must be a 64-hex SHA-256 digest`);
  return text;
}

/** Sorted, de-duplicated lowercase tokens (a mandate's sets). */
const sortedSet = (values: unknown, field: string): string[] => [...new Set(strs(values).map((item) => scopeToken(item, field)))].sort();

/** Go's encoding/json HTML escaping, which the protocol receipts' canonical bytes carry. */
const goEscaped = (json: string) => json.replace(/[&<>\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** SHA-256 of the canonical text must be the digest the artifact states, and the Ed25519 signature over those 32 bytes
 * must hold for the key it embeds, which must be one of `trusted` when that is given. */
function checkSignature(wire: Json, canonicalText: string, trusted: readonly string[] | undefined): string {
  const digestBytes = sha256(new TextEncoder().encode(canonicalText));
  if (str(wire.signing_algorithm || algorithm) !== algorithm) refuse('signing_algorithm must be ed25519-sha256-json-v1');
  if (str(wire.message_digest_sha256_hex) !== toHex(digestBytes)) refuse('message digest mismatch');
  const key = str(wire.signing_public_key_ed25519_hex).trim().toLowerCase();
  const signature = str(wire.ed25519_signature_hex).trim().toLowerCase();
  if (!hex64.test(key) || !hex128.test(signature)) refuse('invalid signing material');
  if (trusted && trusted.length > 0 && !trusted.includes(key)) refuse('signing key is not in the trusted set');
  if (!noble.verify(fromHex(signature), digestBytes, fromHex(key))) refuse('ed25519 signature verification failed');
  return toHex(digestBytes);
}

function versionsOf(wire: Json, kind: string, label: string): void {
  const schemaVersion = num(wire.schema_version);
  if (schemaVersion !== 0 && schemaVersion !== 1) refuse(`${label}: unsupported schema_version ${String(wire.schema_version)}`);
  if ((str(wire.kind).trim() || kind) !== kind) refuse(`${label}: unsupported kind ${JSON.stringify(wire.kind)}`);
  if (wire.receipt_version !== undefined && (str(wire.receipt_version).trim() || '1') !== '1') refuse(`${label}: unsupported receipt_version`);
}

function transportBinding(value: unknown): Json {
  const raw = obj(value);
  const out: Json = { source_protocol: scopeToken(str(raw.source_protocol).trim() || 'ap2', 'source_protocol') };
  for (const name of ['partner_platform', 'external_authorization_id', 'request_id']) {
    const text = str(raw[name]).trim();
    if (text.length > 256) refuse(`transport_binding.${name} is longer than 256`);
    if (text !== '') out[name] = text;
  }
  return out;
}

function receiptIdentity(wire: Json, label: string): { receiptId: string; intentId: string; tenantId: string } {
  const receiptId = scopeToken(wire.receipt_id, `${label}: receipt_id`);
  const intentId = str(wire.intent_id).trim().toLowerCase();
  if (!uuid.test(intentId)) refuse(`${label}: intent_id must be a canonical UUID`);
  const tenantId = str(wire.tenant_id).trim();
  if (!tenant.test(tenantId) || tenantId.length > 256) refuse(`${label}: tenant_id is not a tenant id`);
  return { receiptId, intentId, tenantId };
}

/** A protocol settlement receipt, as the client checks one. Answers its message digest. */
export function verifyClientSettlementReceipt(wire: Json, trusted?: readonly string[]): string {
  const label = 'protocol settlement receipt';
  versionsOf(wire, clientKinds.settlement, label);
  const { receiptId, intentId, tenantId } = receiptIdentity(wire, label);
  if (receiptId !== intentId) refuse(`${label}: receipt_id must equal intent_id`);
  const harborState = str(wire.harbor_state).trim().toLowerCase();
  if (!terminalStates.has(harborState)) refuse(`${label}: harbor_state is not terminal`);
  const amountCents = num(wire.amount_cents);
  if (amountCents <= 0) refuse(`${label}: amount_cents must be greater than zero`);
  const canonical: Json = {
    schema_version: 1,
    kind: clientKinds.settlement,
    receipt_version: '1',
    receipt_id: receiptId,
    issued_at: seconds(wire.issued_at, `${label}: issued_at`),
    intent_id: intentId,
    tenant_id: tenantId,
    verifier_id: scopeToken(wire.verifier_id, `${label}: verifier_id`),
    transport_binding: transportBinding(wire.transport_binding),
    authorization_receipt_id: scopeToken(wire.authorization_receipt_id, `${label}: authorization_receipt_id`),
    mandate_digest_sha256_hex: digest(wire.mandate_digest_sha256_hex, `${label}: mandate_digest_sha256_hex`),
    harbor_state: harborState,
    ...(typeof wire.predicate_passed === 'boolean' ? { predicate_passed: wire.predicate_passed } : {}),
    settlement_rail: str(wire.settlement_rail).trim().toLowerCase() || refuse(`${label}: settlement_rail is required`),
    settlement_mode: str(wire.settlement_mode).trim() || refuse(`${label}: settlement_mode is required`),
    principal_did: str(wire.principal_did).trim(),
    payee_did: str(wire.payee_did).trim(),
    currency: str(wire.currency).trim().toLowerCase() || refuse(`${label}: currency is required`),
    amount_cents: amountCents,
    terminal_observed_at: seconds(wire.terminal_observed_at, `${label}: terminal_observed_at`),
  };
  return checkSignature(wire, goEscaped(JSON.stringify(canonical)), trusted);
}

/** A protocol authorization receipt (a mandate import's), as the client checks one. Answers its message digest. */
export function verifyClientAuthorizationReceipt(wire: Json, trusted?: readonly string[]): string {
  const label = 'protocol authorization receipt';
  versionsOf(wire, clientKinds.authorization, label);
  const { receiptId, intentId, tenantId } = receiptIdentity(wire, label);
  if ((str(wire.status).trim().toLowerCase() || 'authorized') !== 'authorized') refuse(`${label}: unsupported status`);
  const authorization = obj(wire.authorization);
  const authorizationKind = str(authorization.kind).trim().toLowerCase();
  if (authorizationKind !== 'principal' && authorizationKind !== 'tenant') refuse(`${label}: authorization.kind`);
  if (str(authorization.tenant_id).trim() !== tenantId) refuse(`${label}: authorization.tenant_id must match tenant_id`);
  const agent = obj(wire.agent);
  if (str(agent.subject).trim() === '') refuse(`${label}: agent.subject is required`);
  const allowedActions = sortedSet(wire.allowed_actions, 'allowed_actions');
  const allowedTools = sortedSet(wire.allowed_tools, 'allowed_tools');
  if (allowedActions.length === 0 && allowedTools.length === 0) refuse(`${label}: an allowed action or tool is required`);
  const ceiling = obj(wire.spend_ceiling);
  if (num(ceiling.amount_minor) <= 0) refuse(`${label}: spend_ceiling.amount_minor`);
  const currency = str(ceiling.currency).trim().toLowerCase();
  if (!mandateCurrency.test(currency)) refuse(`${label}: spend_ceiling.currency`);
  const settlement = obj(wire.settlement);
  const constraint = obj(wire.constraint);
  const presence = str(wire.human_presence_mode).trim().toLowerCase();
  if (presence !== 'human_present' && presence !== 'human_not_present') refuse(`${label}: human_presence_mode`);
  const importedKey = str(wire.imported_mandate_signing_public_key_ed25519_hex).trim().toLowerCase();
  if (!hex64.test(importedKey)) refuse(`${label}: imported_mandate_signing_public_key_ed25519_hex`);
  const canonical: Json = {
    schema_version: 1,
    kind: clientKinds.authorization,
    receipt_version: '1',
    receipt_id: receiptId,
    issued_at: seconds(wire.issued_at, `${label}: issued_at`),
    status: 'authorized',
    intent_id: intentId,
    tenant_id: tenantId,
    verifier_id: scopeToken(wire.verifier_id, `${label}: verifier_id`),
    transport_binding: transportBinding(wire.transport_binding),
    mandate_digest_sha256_hex: digest(wire.mandate_digest_sha256_hex, `${label}: mandate_digest_sha256_hex`),
    imported_mandate_signing_public_key_ed25519_hex: importedKey,
    authorization: {
      kind: authorizationKind,
      tenant_id: tenantId,
      principal_subject: str(authorization.principal_subject).trim(),
      principal_type: str(authorization.principal_type).trim().toLowerCase(),
    },
    agent: { subject: str(agent.subject).trim(), issuer: str(agent.issuer).trim(), key_id: str(agent.key_id).trim(), display_name: str(agent.display_name).trim() },
    allowed_actions: allowedActions.length > 0 ? allowedActions : null,
    allowed_tools: allowedTools.length > 0 ? allowedTools : null,
    spend_ceiling: { amount_minor: num(ceiling.amount_minor), currency },
    settlement: {
      default_rail: str(settlement.default_rail).trim().toLowerCase() || refuse(`${label}: settlement.default_rail`),
      allowed_rails: sortedSet(settlement.allowed_rails, 'allowed_rails'),
    },
    constraint: {
      kind: str(constraint.kind).trim().toLowerCase() || refuse(`${label}: constraint.kind`),
      id: str(constraint.id).trim(),
      version: str(constraint.version).trim(),
      digest_sha256_hex: str(constraint.digest_sha256_hex).trim().toLowerCase(),
      uri: str(constraint.uri).trim(),
    },
    expires_at: seconds(wire.expires_at, `${label}: expires_at`),
    nonce: str(wire.nonce).trim() || refuse(`${label}: nonce is required`),
    human_presence_mode: presence,
  };
  return checkSignature(wire, goEscaped(JSON.stringify(canonical)), trusted);
}

// ---- Agent receipts ----

/** Members of `pairs` whose value is present: the client leaves out an optional field that is empty or 0. */
const present = (pairs: Array<[string, unknown]>): Json => Object.fromEntries(pairs.filter(([, value]) => value !== undefined && value !== '' && value !== 0 && value !== null));

function forbiddenFieldIn(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.map(forbiddenFieldIn).find((found) => found !== undefined);
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, member] of Object.entries(value)) {
    if (forbiddenAgentReceiptFields.has(key)) return key;
    const found = forbiddenFieldIn(member);
    if (found !== undefined) return found;
  }
  return undefined;
}

function optionalDigest(value: unknown, field: string): string | undefined {
  return str(value).trim() === '' ? undefined : digest(value, field);
}

function agentAuthorization(raw: Json): Json {
  const agent = obj(raw.agent);
  const policy = obj(raw.policy);
  const currency = str(raw.currency).trim().toLowerCase();
  if (!isoCurrency.test(currency)) refuse(`agent receipt: currency ${JSON.stringify(currency)} is not canonical`);
  if (str(raw.principal_did).trim() === '' || str(raw.actor_subject).trim() === '') refuse('agent receipt: principal_did and actor_subject are required');
  if (str(agent.operator_did).trim() === '') refuse('agent receipt: agent.operator_did is required');
  const decisionId = str(raw.decision_id).trim().toLowerCase();
  if (!uuid.test(decisionId)) refuse('agent receipt: decision_id must be a canonical UUID');
  const auditId = str(raw.audit_id).trim().toLowerCase();
  if (auditId !== '' && !uuid.test(auditId)) refuse('agent receipt: audit_id must be a canonical UUID');
  if (num(raw.requested_spend_cents) < 0) refuse('agent receipt: requested_spend_cents must be non-negative');
  const mandateDigest = optionalDigest(raw.mandate_digest_sha256_hex, 'mandate_digest_sha256_hex');
  const mandateReference = str(raw.mandate_reference_id).trim();
  if (mandateReference !== '' && mandateDigest === undefined) refuse('agent receipt: mandate_reference_id requires mandate_digest_sha256_hex');
  const reasonCodes = [...new Set(strs(raw.reason_codes).map((code) => scopeToken(code, 'reason_codes')))];
  return {
    principal_did: str(raw.principal_did).trim(),
    actor_subject: str(raw.actor_subject).trim(),
    agent: {
      operator_did: str(agent.operator_did).trim(),
      model_family: scopeToken(agent.model_family, 'agent.model_family'),
      ...present([['model_instance_id', str(agent.model_instance_id).trim()]]),
      config_hash_sha256_hex: digest(agent.config_hash_sha256_hex, 'agent.config_hash_sha256_hex'),
      prompt_hash_sha256_hex: digest(agent.prompt_hash_sha256_hex, 'agent.prompt_hash_sha256_hex'),
      ...present([['deployment_epoch', agent.deployment_epoch]]),
    },
    decision_id: decisionId,
    ...present([['audit_id', auditId]]),
    policy: {
      template_id: str(policy.template_id).trim() || refuse('agent receipt: policy.template_id is required'),
      ...present([['version_seq', policy.version_seq]]),
      content_digest_sha256_hex: digest(policy.content_digest_sha256_hex, 'policy.content_digest_sha256_hex'),
      ...present([['spend_policy_version', policy.spend_policy_version]]),
    },
    authorized_at: seconds(raw.authorized_at, 'authorized_at'),
    requested_spend_cents: num(raw.requested_spend_cents),
    currency,
    ...(reasonCodes.length > 0 ? { reason_codes: reasonCodes } : {}),
    ...present([
      ['mandate_digest_sha256_hex', mandateDigest],
      ['mandate_reference_id', mandateReference],
      ['zk_policy_proof_digest_sha256_hex', optionalDigest(raw.zk_policy_proof_digest_sha256_hex, 'zk_policy_proof_digest_sha256_hex')],
    ]),
  };
}

function agentExecution(raw: Json): Json {
  const outcome = str(raw.outcome).trim().toLowerCase();
  if (!['executed', 'denied', 'skipped', 'failed'].includes(outcome)) refuse('agent receipt: execution.outcome');
  const runId = str(raw.run_id).trim().toLowerCase();
  if (!uuid.test(runId)) refuse('agent receipt: execution.run_id must be a canonical UUID');
  if (num(raw.duration_ms) < 0) refuse('agent receipt: duration_ms must be non-negative');
  return {
    run_id: runId,
    tool_call_id: str(raw.tool_call_id).trim() || refuse('agent receipt: tool_call_id is required'),
    tool_name: scopeToken(raw.tool_name, 'tool_name'),
    operation: scopeToken(raw.operation, 'operation'),
    arguments_digest_sha256_hex: digest(raw.arguments_digest_sha256_hex, 'arguments_digest_sha256_hex'),
    ...present([['result_digest_sha256_hex', optionalDigest(raw.result_digest_sha256_hex, 'result_digest_sha256_hex')]]),
    outcome,
    started_at: seconds(raw.started_at, 'started_at'),
    completed_at: seconds(raw.completed_at, 'completed_at'),
    ...present([
      ['duration_ms', raw.duration_ms],
      ['tee_attestation_digest_sha256_hex', optionalDigest(raw.tee_attestation_digest_sha256_hex, 'tee_attestation_digest_sha256_hex')],
    ]),
  };
}

function agentOutcome(raw: Json, scope: string): Json {
  const reservation = str(raw.spend_reservation_outcome).trim().toLowerCase();
  if (reservation !== '' && !['consumed', 'released', 'pending', 'none'].includes(reservation)) refuse('agent receipt: spend_reservation_outcome');
  const settlement = str(raw.settlement_outcome).trim();
  if (settlement !== '' && !['SETTLED', 'PENDING_FINALITY', 'REVERSED', 'FAILED'].includes(settlement)) refuse('agent receipt: settlement_outcome');
  if (settlement !== '' && scope !== 'intent_terminal') refuse('agent receipt: settlement_outcome is only for intent_terminal scope');
  return {
    harbor_state: scopeToken(raw.harbor_state, 'harbor_state'),
    ...present([['spend_reservation_outcome', reservation]]),
    ...(raw.predicate_passed === undefined ? {} : { predicate_passed: raw.predicate_passed }),
    ...present([['settlement_outcome', settlement]]),
  };
}

function agentReferences(raw: Json): Json {
  if (num(raw.ledger_seq) < 0) refuse('agent receipt: ledger_seq must be non-negative');
  const settlementReceiptId = str(raw.settlement_receipt_id).trim().toLowerCase();
  if (settlementReceiptId !== '' && !uuid.test(settlementReceiptId) && !hex64.test(settlementReceiptId)) refuse('agent receipt: settlement_receipt_id');
  const intentId = str(raw.intent_id).trim().toLowerCase();
  if (!uuid.test(intentId)) refuse('agent receipt: references.intent_id must be a canonical UUID');
  return { intent_id: intentId, ...present([['ledger_seq', raw.ledger_seq]]), settlement_receipt_id: settlementReceiptId === '' ? null : settlementReceiptId };
}

function agentAttestations(value: unknown): Json[] {
  const entries = Array.isArray(value) ? value : [];
  return entries.map((entry) => {
    const raw = obj(entry);
    return {
      source: scopeToken(raw.source, 'external_attestations.source'),
      kind: str(raw.kind).trim() || refuse('agent receipt: external_attestations.kind is required'),
      digest_sha256_hex: digest(raw.digest_sha256_hex, 'external_attestations.digest_sha256_hex'),
      ...present([['reference_id', str(raw.reference_id).trim()]]),
    };
  });
}

/** An agent receipt, as the client checks one (its offline verifier and its MCP receipt resource). Answers its digest. */
export function verifyClientAgentReceipt(wire: Json, trusted?: readonly string[]): string {
  const forbidden = forbiddenFieldIn(wire);
  if (forbidden !== undefined) refuse(`agent receipt: forbidden field ${forbidden}`);
  versionsOf(wire, clientKinds.agent, 'agent receipt');
  const scope = str(wire.scope).trim().toLowerCase();
  if (scope !== 'action' && scope !== 'intent_terminal') refuse('agent receipt: scope must be action or intent_terminal');
  const receiptId = str(wire.receipt_id).trim().toLowerCase() || refuse('agent receipt: receipt_id is required');
  const tenantId = str(wire.tenant_id).trim() || refuse('agent receipt: tenant_id is required');
  const authorization = agentAuthorization(obj(wire.authorization));
  const references = agentReferences(obj(wire.references));
  const attestations = agentAttestations(wire.external_attestations);
  // A mandate digest names an attestation of the mandate; a mandate reference id is that attestation's reference.
  const mandateDigest = authorization.mandate_digest_sha256_hex as string | undefined;
  if (mandateDigest !== undefined) {
    const entry = attestations.find((item) => item.kind === 'agent_mandate_v1' && item.digest_sha256_hex === mandateDigest);
    if (!entry) refuse('agent receipt: mandate_digest_sha256_hex must match an external_attestations entry of kind agent_mandate_v1');
    if (authorization.mandate_reference_id !== undefined && authorization.mandate_reference_id !== entry.reference_id) refuse('agent receipt: mandate_reference_id mismatch');
  }
  // Only an action receipt has an execution: an intent-terminal one's would be dropped (and its digest not match).
  const execution = scope === 'action' ? agentExecution(wire.execution === undefined ? refuse('agent receipt: execution is required for action scope') : obj(wire.execution)) : undefined;
  const expectedId = scope === 'action' ? toHex(sha256(new TextEncoder().encode(`${references.intent_id as string}\0${execution!.tool_call_id as string}`))) : references.intent_id;
  if (receiptId !== expectedId) refuse(`agent receipt: receipt_id does not match the ${scope} derivation`);
  const merchant = wire.merchant === undefined ? undefined : obj(wire.merchant);
  const evidence = wire.evidence === undefined ? undefined : obj(wire.evidence);
  const payment = wire.payment === undefined ? undefined : obj(wire.payment);
  const continuity = wire.continuity === undefined ? undefined : obj(wire.continuity);
  if (continuity && execution && str(continuity.run_id).trim().toLowerCase() !== execution.run_id) refuse('agent receipt: continuity.run_id must match execution.run_id');
  const canonical: Json = {
    schema_version: 1,
    kind: clientKinds.agent,
    receipt_version: '1',
    scope,
    receipt_id: receiptId,
    issued_at: seconds(wire.issued_at, 'issued_at'),
    tenant_id: tenantId,
    authorization,
    ...(execution ? { execution } : {}),
    ...(merchant ? { merchant: { payee_did: str(merchant.payee_did).trim() || refuse('agent receipt: payee_did is required'), ...present([['vendor_id', merchant.vendor_id === undefined ? undefined : scopeToken(merchant.vendor_id, 'vendor_id')], ['vendor_ref_id', str(merchant.vendor_ref_id).trim()]]) } } : {}),
    ...(evidence
      ? {
          evidence: {
            completion_preset_id: scopeToken(evidence.completion_preset_id, 'completion_preset_id'),
            payload_digest_sha256_hex: digest(evidence.payload_digest_sha256_hex, 'payload_digest_sha256_hex'),
            ...present([['artifacts_digest_sha256_hex', optionalDigest(evidence.artifacts_digest_sha256_hex, 'artifacts_digest_sha256_hex')]]),
            predicate_passed: evidence.predicate_passed,
            payee_did: str(evidence.payee_did).trim() || refuse('agent receipt: evidence.payee_did is required'),
            ...present([['payee_signature_digest_sha256_hex', optionalDigest(evidence.payee_signature_digest_sha256_hex, 'payee_signature_digest_sha256_hex')]]),
          },
        }
      : {}),
    ...(payment
      ? {
          payment: {
            intent_id: uuid.test(str(payment.intent_id).trim().toLowerCase()) ? str(payment.intent_id).trim().toLowerCase() : refuse('agent receipt: payment.intent_id'),
            settlement_rail: scopeToken(payment.settlement_rail, 'settlement_rail'),
            ...present([
              ['funding_method', payment.funding_method === undefined ? undefined : scopeToken(payment.funding_method, 'funding_method')],
              ['funding_reference', str(payment.funding_reference).trim()],
              ['funding_receipt_digest_sha256_hex', optionalDigest(payment.funding_receipt_digest_sha256_hex, 'funding_receipt_digest_sha256_hex')],
            ]),
          },
        }
      : {}),
    outcome: agentOutcome(obj(wire.outcome), scope),
    references,
    external_attestations: attestations.length > 0 ? attestations : null,
    ...(continuity ? { continuity: { ...present([['prev_message_digest_sha256_hex', str(continuity.prev_message_digest_sha256_hex).trim().toLowerCase()]]), sequence_number: num(continuity.sequence_number), run_id: str(continuity.run_id).trim().toLowerCase() } } : {}),
  };
  return checkSignature(wire, JSON.stringify(canonical), trusted);
}

// ---- Transparency: signed tree heads and inclusion proofs ----

/** A signed tree head, as the client checks one: its seven canonical fields, in their order, algorithm included. */
export function verifyClientTreeHead(head: Json, trusted?: readonly string[]): void {
  if (head.kind !== clientKinds.treeHead) refuse(`tree head: kind must be ${clientKinds.treeHead}`);
  if (head.schema_version !== 1) refuse('tree head: schema_version must be 1');
  if (str(head.tenant_id).trim() === '') refuse('tree head: tenant_id is required');
  if (!Number.isInteger(head.tree_size) || num(head.tree_size) < 0) refuse('tree head: tree_size must be a non-negative integer');
  if (head.signing_algorithm !== algorithm) refuse('tree head: signing_algorithm');
  const canonical = {
    kind: clientKinds.treeHead,
    schema_version: 1,
    tenant_id: str(head.tenant_id).trim(),
    tree_size: head.tree_size,
    root_hash_sha256_hex: digest(head.root_hash_sha256_hex, 'root_hash_sha256_hex'),
    issued_at: str(head.issued_at).trim(),
    signing_algorithm: algorithm,
  };
  checkSignature(head, JSON.stringify(canonical), trusted);
}

const leafHash = (data: Uint8Array) => sha256(new Uint8Array([0, ...data]));
const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(new Uint8Array([1, ...left, ...right]));

/** The root an audit path leads to (RFC 6962 §2.1.1 recursion), and how many path entries it used. */
function rootFrom(leaf: Uint8Array, index: number, size: number, path: Uint8Array[], used = 0): { root: Uint8Array; used: number } {
  if (size === 1) return { root: leaf, used };
  let split = 1;
  while (split * 2 < size) split *= 2;
  if (index < split) {
    const left = rootFrom(leaf, index, split, path, used);
    const sibling = path[left.used] ?? refuse('inclusion proof: audit path too short');
    return { root: nodeHash(left.root, sibling), used: left.used + 1 };
  }
  const right = rootFrom(leaf, index - split, size - split, path, used);
  const sibling = path[right.used] ?? refuse('inclusion proof: audit path too short');
  return { root: nodeHash(sibling, right.root), used: right.used + 1 };
}

/** An inclusion proof, as the client checks one: its head verifies and matches it, the leaf is SHA-256(0x00 ‖ the
 * receipt's message digest), and the audit path leads exactly to the head's root. */
export function verifyClientInclusionProof(proof: Json, trusted?: readonly string[]): void {
  if (proof.kind !== clientKinds.inclusionProof) refuse(`inclusion proof: kind must be ${clientKinds.inclusionProof}`);
  if (proof.schema_version !== 1) refuse('inclusion proof: schema_version must be 1');
  if (str(proof.tenant_id).trim() === '' || str(proof.receipt_id).trim() === '') refuse('inclusion proof: tenant_id and receipt_id are required');
  const size = proof.tree_size as number;
  const index = proof.leaf_index as number;
  if (!Number.isInteger(size) || size <= 0) refuse('inclusion proof: tree_size must be a positive integer');
  if (!Number.isInteger(index) || index < 0 || index >= size) refuse('inclusion proof: leaf_index out of range');
  const head = obj(proof.tree_head);
  verifyClientTreeHead(head, trusted);
  if (str(head.tenant_id).trim() !== str(proof.tenant_id).trim() || head.tree_size !== size) refuse('inclusion proof: tree head tenant or size mismatch');
  const root = digest(proof.root_hash_sha256_hex, 'root_hash_sha256_hex');
  if (head.root_hash_sha256_hex !== root) refuse('inclusion proof: tree head root mismatch');
  const leaf = leafHash(fromHex(digest(proof.message_digest_sha256_hex, 'message_digest_sha256_hex')));
  if (toHex(leaf) !== digest(proof.leaf_hash_sha256_hex, 'leaf_hash_sha256_hex')) refuse('inclusion proof: leaf_hash does not match message digest');
  const path = (Array.isArray(proof.audit_path_sha256_hex) ? proof.audit_path_sha256_hex : []).map((entry: unknown) => fromHex(digest(entry, 'audit_path_sha256_hex')));
  const { root: computed, used } = rootFrom(leaf, index, size, path);
  if (used !== path.length) refuse('inclusion proof: audit path too long');
  if (toHex(computed) !== root) refuse('inclusion proof: does not lead to the root hash');
}

/** Any receipt the getters answer, by its kind. Answers the message digest the client computed. */
export function verifyClientReceipt(wire: Json, trusted?: readonly string[]): string {
  switch (wire.kind) {
    case clientKinds.settlement:
      return verifyClientSettlementReceipt(wire, trusted);
    case clientKinds.authorization:
      return verifyClientAuthorizationReceipt(wire, trusted);
    case clientKinds.agent:
      return verifyClientAgentReceipt(wire, trusted);
    default:
      return refuse(`not a receipt kind the client verifies: ${String(wire.kind)}`);
  }
}

/** The trusted key set as the client takes it, from the signing-keys discovery document. */
export const signingKeysOf = (document: Json): string[] => (Array.isArray(document.keys) ? document.keys : []).map((key) => str(obj(key).signing_public_key_ed25519_hex));
