// The digest and version label of a policy document (docs/policy-documents.md#digest): SHA-256 of its canonical JSON
// in the normalized form below, so that two documents that mean the same thing have the same digest. Pure.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../signing/canonical-json.ts';
import type { PolicyDocument } from './document.ts';

const toolFieldOrder = ['side_effecting', 'max_spend_cents', 'spend_from_args', 'evidence_preset', 'vendor_pack', 'operation'] as const;

/** The document's fields that carry meaning: empty sections and an empty allowed-tools list are left out, and so are
 * the inheritance fields of an overlay, which an effective (flat) document no longer has. */
export function normalizedPolicyDocument(document: PolicyDocument): Record<string, unknown> {
  const tools = Object.fromEntries(Object.entries(document.tools).map(([name, entry]) => [
    name,
    Object.fromEntries(toolFieldOrder.filter((field) => entry[field] !== undefined).map((field) => [field, entry[field]])),
  ]));
  const normalized: Record<string, unknown> = { version: document.version, name: document.name, default_deny: document.default_deny, tools };
  const intent: Record<string, unknown> = {};
  if (document.intent?.policy_binding) intent.policy_binding = document.intent.policy_binding;
  if (document.intent?.budget) intent.budget = document.intent.budget;
  if (document.intent?.allowed_tools?.length) intent.allowed_tools = document.intent.allowed_tools;
  if (Object.keys(intent).length > 0) normalized.intent = intent;
  if (document.adapter?.deny_provider_executed_tools !== undefined) normalized.adapter = { deny_provider_executed_tools: document.adapter.deny_provider_executed_tools };
  return normalized;
}

/** `sha256:` and the lowercase hex SHA-256 of the normalized document's canonical (sorted-key, compact) JSON. */
export function policyDocumentDigest(document: PolicyDocument): string {
  return `sha256:${createHash('sha256').update(canonicalJson(normalizedPolicyDocument(document))).digest('hex')}`;
}

/** `<name>@<first 8 hex of the digest>`: how a person tells two versions of a policy apart in a log line. */
export function policyVersionLabel(name: string, digest: string): string {
  return `${name}@${digest.replace(/^sha256:/, '').slice(0, 8)}`;
}
