// The ledger as the API shows it (docs/ledger.md#routes): rows as events, the signed tip checkpoint, the signing
// authority, and the transparency log's signed tree heads and proofs (docs/protocol.md#transparency-log). Audit
// bundles carry the same `LedgerLine` in ledger.jsonl.
import Type, { type Static } from 'typebox';
import { ledgerEventsPageDefault, ledgerEventsPageMax } from '../limits.ts';
import { Nullable } from './common.ts';
import { ledgerEventsExample } from './examples.ts';

const Hex = Type.String({ pattern: '^[0-9a-f]*$' });

/** The kinds of ledger transaction the engine posts (docs/ledger.md). */
export const ledgerEventKinds = ['fund', 'release', 'refund', 'split'] as const;
export type LedgerEventKind = (typeof ledgerEventKinds)[number];

/** One ledger row: its columns, its body and both hashes, so an auditor recomputes the chain from these fields. */
export const LedgerLine = Type.Object({
  ledger_seq: Type.Integer({ minimum: 1 }),
  transaction_id: Type.String(),
  intent_id: Type.String(),
  entry_index: Type.Integer({ minimum: 0 }),
  account: Type.String(),
  side: Type.Enum(['debit', 'credit'] as const),
  amount_cents: Type.Integer(),
  currency: Type.String(),
  event_kind: Type.String(),
  recorded_at: Type.String({ description: 'RFC 3339 UTC with milliseconds.' }),
  body_hex: Hex,
  prev_row_hash_hex: Hex,
  row_hash_hex: Hex,
});
export type LedgerLine = Static<typeof LedgerLine>;

/** The tip signed by the gateway key: Ed25519 over SHA-256 of the compact JSON of the first four fields. */
export const LedgerCheckpoint = Type.Object({
  tenant_id: Type.String(),
  ledger_seq: Type.Integer({ minimum: 0 }),
  row_hash_hex: Hex,
  issued_at: Type.String(),
  signing_public_key_ed25519_hex: Hex,
  message_digest_sha256_hex: Hex,
  ed25519_signature_hex: Hex,
  kid: Type.String(),
});
export type LedgerCheckpoint = Static<typeof LedgerCheckpoint>;

export const LedgerTip = Type.Object({
  tenant: Type.String(),
  tenant_id: Type.String(),
  ledger_seq: Type.Integer({ minimum: 0 }),
  row_hash_hex: Hex,
  checkpoint: LedgerCheckpoint,
});
export type LedgerTip = Static<typeof LedgerTip>;

export const LedgerAuthority = Type.Object({
  tenant: Type.String(),
  tenant_id: Type.String(),
  algorithm: Type.Literal('ed25519'),
  public_key_hex: Hex,
  kid: Type.String(),
  verification_keys: Type.Array(Type.Object({ kid: Type.String(), public_key_hex: Hex })),
});
export type LedgerAuthority = Static<typeof LedgerAuthority>;

export const LedgerEventsQuery = Type.Object(
  {
    after_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ledgerEventsPageMax, default: ledgerEventsPageDefault })),
  },
  { additionalProperties: false },
);
export type LedgerEventsQuery = Static<typeof LedgerEventsQuery>;

export const LedgerEvents = Type.Object(
  {
    tenant: Type.String(),
    tenant_id: Type.String(),
    events: Type.Array(LedgerLine),
    next_after_seq: Nullable(Type.Integer({ description: 'Pass as `after_seq` for the next page; null on the last.' })),
  },
  { examples: [ledgerEventsExample] },
);
export type LedgerEvents = Static<typeof LedgerEvents>;

const signatureMaterial = {
  signing_algorithm: Type.Literal('ed25519-sha256-json-v1'),
  message_digest_sha256_hex: Hex,
  signing_public_key_ed25519_hex: Hex,
  ed25519_signature_hex: Hex,
};

/** A signed tree head of the kind the tree-head pass signs (the public client's format), fields in signed order. */
export const ClientSignedTreeHead = Type.Object({
  kind: Type.Literal('svc.agent_receipt_transparency_sth_v1'),
  schema_version: Type.Literal(1),
  tenant_id: Type.String(),
  tree_size: Type.Integer({ minimum: 1 }),
  root_hash_sha256_hex: Hex,
  issued_at: Type.String(),
  ...signatureMaterial,
});
export type ClientSignedTreeHead = Static<typeof ClientSignedTreeHead>;

/** A signed tree head of the kind signed before: still served for the tree sizes it was signed at. */
export const LegacySignedTreeHead = Type.Object({
  schema_version: Type.Literal(1),
  kind: Type.Literal('svc.transparency_tree_head_v1'),
  tenant_id: Type.String(),
  tree_size: Type.Integer({ minimum: 1 }),
  root_hash: Hex,
  issued_at: Type.String(),
  key_id: Type.String(),
  ...signatureMaterial,
});
export type LegacySignedTreeHead = Static<typeof LegacySignedTreeHead>;

/** A signed tree head of the tenant's transparency log, answered as signed (a file `svc receipt verify` takes): of
 * the current kind, or of the earlier kind for a size signed before the change (docs/protocol.md#transparency-log). */
export const SignedTreeHead = Type.Union([ClientSignedTreeHead, LegacySignedTreeHead]);
export type SignedTreeHead = Static<typeof SignedTreeHead>;

/** Proof parameters arrive as text and are judged by the route, so each refusal has the log's own code. */
export const proofParameter = Type.Optional(Type.String({ maxLength: 20 }));

export const InclusionProof = Type.Object({
  tenant_id: Type.String(),
  leaf_index: Type.Integer({ minimum: 0 }),
  tree_size: Type.Integer({ minimum: 1 }),
  kind: Type.String(),
  artifact_id: Type.String(),
  /** 1: the leaf hashes the artifact's canonical bytes (leaves appended before the change); 2: their SHA-256. */
  leaf_format: Type.Union([Type.Literal(1), Type.Literal(2)]),
  leaf_hash: Hex,
  inclusion_proof: Type.Array(Hex),
  tree_head: Nullable(SignedTreeHead),
});
export type InclusionProof = Static<typeof InclusionProof>;

export const ConsistencyProof = Type.Object({
  tenant_id: Type.String(),
  first: Type.Integer({ minimum: 1 }),
  second: Type.Integer({ minimum: 1 }),
  consistency_proof: Type.Array(Hex),
  first_tree_head: Nullable(SignedTreeHead),
  second_tree_head: Nullable(SignedTreeHead),
});
export type ConsistencyProof = Static<typeof ConsistencyProof>;
