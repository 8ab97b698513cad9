// What the public client hands over with evidence for the agent receipts (docs/protocol.md#agent-receipts): the
// external attestations it verified itself (header `x-svc-agent-receipt-attestations`, or `external_attestations` in
// the sandbox evidence metadata) and the agent run they came from (`x-svc-agent-run-id`). Pure: parsed, normalized
// as the client's own receipt verifier normalizes them (so the signed bytes are the ones it rebuilds), bounded.
import {
  externalAttestationKindLengthMax,
  externalAttestationReferenceLengthMax,
  externalAttestationsHeaderBytesMax,
  externalAttestationsMax,
} from '../../limits.ts';
import type { ExternalAttestation } from '../../contracts/protocol.ts';
import { ServiceError } from '../../errors/service-error.ts';

export type { ExternalAttestation };

/** The attestation kind that names an imported mandate (the client requires one for a receipt's mandate digest). */
export const mandateAttestationKind = 'agent_mandate_v1';

const scopeTokenPattern = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;
const hex64Pattern = /^[0-9a-f]{64}$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const entryFields = new Set(['source', 'kind', 'digest_sha256_hex', 'reference_id']);

function refuse(reason: string, index?: number): never {
  throw new ServiceError('evidence.attestations_invalid', { details: { reason, ...(index === undefined ? {} : { index }) } });
}

function entryOf(value: unknown, index: number): ExternalAttestation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('an entry is not an object', index);
  const entry = value as Record<string, unknown>;
  const extra = Object.keys(entry).find((key) => !entryFields.has(key));
  if (extra !== undefined) refuse(`"${extra}" is not a field of an attestation`, index);
  const text = (name: string): string => {
    const member = entry[name];
    if (member === undefined) return '';
    if (typeof member !== 'string') refuse(`${name} is not a string`, index);
    return member.trim();
  };
  const source = text('source').toLowerCase();
  const kind = text('kind');
  const digest = text('digest_sha256_hex').toLowerCase();
  const referenceId = text('reference_id');
  if (!scopeTokenPattern.test(source)) refuse('source must be a lowercase token (^[a-z0-9][a-z0-9._:/-]{0,127}$)', index);
  if (kind === '' || kind.length > externalAttestationKindLengthMax) refuse(`kind must be 1 to ${externalAttestationKindLengthMax} characters`, index);
  if (!hex64Pattern.test(digest)) refuse('digest_sha256_hex must be 64 hex digits', index);
  if (referenceId.length > externalAttestationReferenceLengthMax) refuse(`reference_id is longer than ${externalAttestationReferenceLengthMax} characters`, index);
  return { source, kind, digest_sha256_hex: digest, ...(referenceId === '' ? {} : { reference_id: referenceId }) };
}

/** A JSON array of attestations (from the header or the metadata), normalized; `[]` is no attestation. */
export function parseExternalAttestations(value: unknown): ExternalAttestation[] {
  if (!Array.isArray(value)) refuse('not a JSON array');
  if (value.length > externalAttestationsMax) refuse(`more than ${externalAttestationsMax} entries`);
  return value.map(entryOf);
}

/** The `x-svc-agent-receipt-attestations` header: absent, or the JSON array text the client sends. */
export function parseAttestationsHeader(text: string | undefined): ExternalAttestation[] {
  if (text === undefined) return [];
  if (Buffer.byteLength(text, 'utf8') > externalAttestationsHeaderBytesMax) refuse(`the header is longer than ${externalAttestationsHeaderBytesMax} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    refuse('the header is not JSON');
  }
  return parseExternalAttestations(parsed);
}

/** The `x-svc-agent-run-id` header: absent, or a UUID (lowercased). */
export function parseAgentRunId(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const runId = text.trim().toLowerCase();
  if (!uuidPattern.test(runId)) throw new ServiceError('evidence.agent_run_id_invalid');
  return runId;
}
