// The MCP tools as data (docs/mcp.md): each row names the HTTP route the tool calls and how its arguments become that
// request. Roles, scope and input schema are not written here: they are read from the route itself.
import { sandboxEvidenceBody } from '../gateway/routes/sandbox-guardrails.ts';
import { confirmBody } from '../harbor/routes/settlement.ts';
import { recognitionProofHeaderName } from '../../signing/recognition.ts';

/**
 * How a tool's arguments become the request:
 * - `body`: the arguments are the JSON body, and the input schema is the route's body schema itself;
 * - `query`: the arguments are the query string, and the input schema is the route's query schema itself;
 * - `envelope`: path parameters and header fields are arguments of their own, and the body (when the route takes
 *   one) is the argument `body`, whose schema is the route's body schema itself.
 */
export type ToolInput = 'body' | 'query' | 'envelope';

/** A header field an envelope tool takes as an argument of its own. A field with `takesObject` may also be given as
 * the JSON object the header encodes (the public client's MCP tools pass a recognition proof so); it is then sent as
 * base64url of its JSON, as the client encodes it. */
export interface HeaderArgumentSpec {
  readonly header: string;
  readonly description: string;
  readonly takesObject?: true;
}

/** Header fields an envelope tool may take, by argument name; a tool that takes rail credentials also takes each
 * registered rail's credential headers (src/surfaces/mcp/resolved-tools.ts). */
export const headerArguments = {
  idempotency_key: { header: 'idempotency-key', description: 'Sent as the Idempotency-Key header.' },
  recognition_proof: {
    header: recognitionProofHeaderName,
    takesObject: true,
    description: `Sent as the ${recognitionProofHeaderName} header: the agent's recognition proof over this route's method, path and the body bytes (JSON.stringify of the body, or {} without one). The header value, or the proof itself as a JSON object (sent as base64url of its JSON). Required for live tenants.`,
  },
} as const satisfies Record<string, HeaderArgumentSpec>;

export type HeaderArgument = keyof typeof headerArguments;

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly method: 'GET' | 'POST';
  /** The route's path as registered, e.g. `/harbor/intents/:intent_id/fund`. */
  readonly path: string;
  readonly input: ToolInput;
  /** Envelope tools only: header fields the tool takes. */
  readonly headers?: readonly HeaderArgument[];
  /** Envelope tools only: the tool also takes each registered rail's credential headers, under the argument names
   * the rails declare (RailCredentialHeader.toolArgument). */
  readonly railCredentials?: boolean;
  /** For a route that checks its body in the handler rather than registering a schema: the schema it checks with. */
  readonly bodySchema?: object;
  /** Envelope tools only: the body's own fields may also be given as arguments of their own, instead of `body` (the
   * public client's MCP tool takes the sandbox evidence fields so). */
  readonly bodyFieldsAsArguments?: boolean;
  /** Reads change nothing (MCP `readOnlyHint`). */
  readonly readOnly: boolean;
}

const mutationHeaders: readonly HeaderArgument[] = ['idempotency_key', 'recognition_proof'];

/** The client's catalogue in our names. Receipts, mandates, the other standing reads and A2A reads are one row each when
 * they exist. */
export const toolDefinitions: readonly ToolDefinition[] = [
  { name: 'svc_get_principal', method: 'GET', path: '/v1/auth/principal', input: 'envelope', readOnly: true,
    description: 'Who this API key is: tenant, environment, role, key kind and MCP scopes.' },
  { name: 'svc_list_intents', method: 'GET', path: '/harbor/operator/v1/intents', input: 'query', readOnly: true,
    description: 'Lists the tenant\'s intents, newest first, optionally by status or operator (payee) DID; page with cursor.' },
  { name: 'svc_get_intent', method: 'GET', path: '/harbor/operator/v1/intents/:intent_id', input: 'envelope', readOnly: true,
    description: 'One intent of the tenant: state, amounts, allowed tools, release rule.' },
  { name: 'svc_list_events', method: 'GET', path: '/v1/events', input: 'query', readOnly: true,
    description: 'The tenant\'s recent events (intents funded, released, refunded; payouts; keys), newest first, optionally of one type; page with cursor.' },
  // The client's two spend-policy tools read the same dry run of /verify, as its own server does.
  { name: 'svc_get_budget_remaining', method: 'POST', path: '/v1/spend/preflight', input: 'body', readOnly: true,
    description: 'What an intent\'s capability can still spend (remaining, reserved and consumed cents, the spend scope and policy version), as a dry run of /verify that reserves nothing.' },
  { name: 'svc_explain_policy', method: 'POST', path: '/v1/spend/preflight', input: 'body', readOnly: true,
    description: 'Whether a proposed spend would be allowed or denied, every reason code and an explanation in words, as a dry run of /verify that reserves nothing.' },
  { name: 'svc_preview_policy', method: 'POST', path: '/harbor/policy/v1/preview', input: 'body', readOnly: true,
    description: 'Previews a release-rule template with its parameters: the rule it materializes and a human summary. Changes nothing.' },
  { name: 'svc_create_intent', method: 'POST', path: '/harbor/intents', input: 'envelope', headers: mutationHeaders, readOnly: false,
    description: 'Creates an escrowed intent from a principal-signed creation envelope (signing version 6 or 7).' },
  { name: 'svc_fund_intent', method: 'POST', path: '/harbor/intents/:intent_id/fund', input: 'envelope', readOnly: false,
    headers: mutationHeaders, railCredentials: true,
    description: 'Funds an intent through its rail\'s 402 handshake: call once for the challenge, then again with the answer to it.' },
  { name: 'svc_verify_capability', method: 'POST', path: '/verify', input: 'body', readOnly: false,
    description: 'Verifies a capability token for one operation of an intent; an allow reserves the spend.' },
  { name: 'svc_authorize_agent_spend', method: 'POST', path: '/verify', input: 'body', readOnly: false,
    description: 'The spend gate before a paid or side-effecting tool runs: the capability check under the name agents look for.' },
  { name: 'svc_submit_evidence', method: 'POST', path: '/harbor/intents/:intent_id/evidence', input: 'envelope', headers: mutationHeaders, readOnly: false,
    description: 'Submits payee-signed completion evidence; the intent\'s release rule is evaluated against it.' },
  { name: 'svc_confirm_settlement', method: 'POST', path: '/harbor/intents/:intent_id/settlement/confirm', input: 'envelope', readOnly: false,
    headers: mutationHeaders, bodySchema: confirmBody,
    description: 'Carries out the settlement (release or refund) the release rule implies for the recorded evidence.' },
  { name: 'svc_bootstrap_sandbox_guardrail', method: 'POST', path: '/v1/sandbox/guardrails/bootstrap', input: 'body', readOnly: false,
    description: 'Sandbox: creates a funded, unsigned intent for one operation and returns its capability token.' },
  { name: 'svc_submit_sandbox_guardrail_evidence', method: 'POST', path: '/v1/sandbox/guardrails/:intent_id/evidence', input: 'envelope', readOnly: false,
    headers: ['idempotency_key'], bodySchema: sandboxEvidenceBody, bodyFieldsAsArguments: true,
    description: 'Sandbox: submits evidence for a guardrail intent (payload, artifacts, operation, …, as arguments or inside body), evaluated and settled at once.' },
  { name: 'svc_verify_agent_recognition_proof_v1', method: 'POST', path: '/protocol/v2/recognition/verify', input: 'body', readOnly: true,
    description: 'Verifies an agent recognition proof against the request it claims to authenticate.' },
  { name: 'svc_get_portfolio_summary', method: 'GET', path: '/signal/v1/portfolio/summary', input: 'query', readOnly: true,
    description: 'The tenant\'s operators aggregated: how many, their average score, settled intents and volume (optionally for one score_version).' },
  { name: 'svc_list_audit_exports', method: 'GET', path: '/v1/compliance/audit-exports', input: 'query', readOnly: true,
    description: 'Lists the tenant\'s audit export jobs.' },
  { name: 'svc_get_audit_export', method: 'GET', path: '/v1/compliance/audit-exports/:job_id', input: 'envelope', readOnly: true,
    description: 'One audit export job: status, filter, manifest digest.' },
];
