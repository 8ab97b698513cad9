// The audit bundle format (docs/audit-exports.md): a ZIP holding a signed
// `manifest.json` (kind svc.audit_export_manifest_v1) that lists every other file with its SHA-256 and size, plus
// intents.jsonl, ledger.jsonl, ledger-checkpoint.json, and the transparency log's signed tree head with the leaves
// (receipts, mandate imports) of the export's window and their inclusion proofs. Building and verifying live here, with no database and no
// network, so that `svc audit verify` checks a bundle offline with the same code the gateway builds it with.
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { ServiceError } from '../errors/service-error.ts';
import {
  bytesToHex,
  ed25519PublicKey,
  encodeLedgerRowBody,
  ledgerGenesisRowHash,
  ledgerRowHash,
  sha256,
  signArtifact,
  verifyArtifact,
  verifyEd25519,
  type Ed25519Signer,
} from '../signing/index.ts';
import { ledgerCheckpointBytes, type LedgerCheckpoint, type LedgerLine } from './ledger-service.ts';
import { asServiceError } from '../errors/pure-error-mapping.ts';
import { logLeafData, merkleLeafHash, type LogLeafFormat } from '../signing/merkle.ts';
import { artifactLeafBytes, checkInclusion, checkTreeHead, isLogLeafFormat, type SignedTreeHead } from '../receipts/transparency-log.ts';

export const auditManifestKind = 'svc.audit_export_manifest_v1';
/** The manifest's `artifact_version`, unsigned beside its core (src/signing/artifact-kinds.ts says why). */
export const auditManifestArtifactVersion = '1';
export const auditBundlePaths = {
  manifest: 'manifest.json',
  intents: 'intents.jsonl',
  ledger: 'ledger.jsonl',
  checkpoint: 'ledger-checkpoint.json',
  treeHead: 'transparency-tree-head.json',
  logLeaves: 'transparency-log.jsonl',
} as const;

/** One line of transparency-log.jsonl: a leaf of the window with its audit path under the bundle's tree head. */
export interface LogLeafLine {
  readonly leaf_index: number;
  readonly kind: string;
  readonly artifact_id: string;
  readonly appended_at: string;
  /** What the leaf hashes (src/signing/merkle.ts): 1, the artifact's canonical bytes; 2, their SHA-256. Bundles
   * made before leaves had formats leave it out: all their leaves are of format 1. */
  readonly leaf_format?: LogLeafFormat;
  readonly leaf_hash: string;
  readonly artifact: unknown;
  readonly inclusion_proof: readonly string[];
}

export interface BundleFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

export interface AuditManifestFields {
  readonly tenantId: string;
  readonly jobId: string;
  readonly generatedAt: string;
  readonly disclosureTier: 'standard' | 'extended';
  readonly redactionProfile: string;
  readonly checkpointLastLedgerSeq: number;
  readonly exportFilter: Record<string, unknown>;
}

export const jsonLines = (values: readonly unknown[]): Uint8Array => strToU8(values.map((value) => `${JSON.stringify(value)}\n`).join(''));

/** The signed manifest over `files` and the ZIP of manifest + files. */
export function buildAuditBundle(fields: AuditManifestFields, files: readonly BundleFile[], signer: Ed25519Signer) {
  const signed = signArtifact(
    auditManifestKind,
    {
      tenant_realm_id: fields.tenantId,
      job_id: fields.jobId,
      generated_at_rfc3339: fields.generatedAt,
      disclosure_tier: fields.disclosureTier,
      redaction_profile: fields.redactionProfile,
      checkpoint_last_ledger_seq: fields.checkpointLastLedgerSeq,
      export_filter: fields.exportFilter,
      artifacts: files.map((file) => ({ path: file.path, sha256_hex: bytesToHex(sha256(file.bytes)), size_bytes: file.bytes.length })),
    },
    signer,
  );
  const { schema_version: schemaVersion, kind, ...rest } = signed;
  const manifest = { schema_version: schemaVersion, kind, artifact_version: auditManifestArtifactVersion, ...rest };
  const manifestBytes = strToU8(`${JSON.stringify(manifest, null, 2)}\n`);
  const entries: Record<string, Uint8Array> = { [auditBundlePaths.manifest]: manifestBytes };
  for (const file of files) entries[file.path] = file.bytes;
  const zip = zipSync(entries, { level: 6 });
  return { manifest, manifestSha256: sha256(manifestBytes), zip, zipSha256: sha256(zip) };
}

export interface AuditBundleReport {
  readonly ok: boolean;
  readonly problems: string[];
  /** Which key the manifest was checked against: the one given, or the one embedded in the manifest. */
  readonly keySource: 'given' | 'embedded';
  readonly signingPublicKeyHex: string | null;
  readonly tenantId: string | null;
  readonly jobId: string | null;
  readonly files: number;
  readonly ledgerRows: number;
  readonly checkpointLedgerSeq: number | null;
  /** Transparency-log leaves checked, and the size of the tree head they were proven under (null: no log files). */
  readonly logLeaves: number;
  readonly treeSize: number | null;
}

const hex64 = /^[0-9a-f]{64}$/;

/**
 * Verifies a bundle offline: the manifest's signature (against `publicKeyHex` when given, else its embedded key),
 * every listed file's SHA-256 and size, no unlisted file, the ledger chain of ledger.jsonl from genesis, the
 * signed checkpoint naming its tip, the transparency log's files, and each intent line's settled parts against what
 * the ledger paid its payee. Never throws for a bad bundle: every finding is a problem in the report.
 */
/** How far an offline verification has got, for a progress display: files checked, then ledger lines. */
export interface AuditBundleProgress {
  readonly phase: 'files' | 'ledger';
  readonly done: number;
  readonly total: number;
}

export function verifyAuditBundle(
  zip: Uint8Array,
  options: { publicKeyHex?: string | undefined; onProgress?: ((progress: AuditBundleProgress) => void) | undefined } = {},
): AuditBundleReport {
  const problems: string[] = [];
  const keySource = options.publicKeyHex === undefined ? 'embedded' : 'given';
  const result = { keySource, signingPublicKeyHex: null as string | null, tenantId: null as string | null, jobId: null as string | null, files: 0, ledgerRows: 0, checkpointLedgerSeq: null as number | null, logLeaves: 0, treeSize: null as number | null } as const;
  const done = (extra: Partial<AuditBundleReport> = {}): AuditBundleReport => ({ ...result, ...extra, ok: problems.length === 0, problems });

  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(zip);
  } catch (error) {
    problems.push(`not a readable ZIP (${(error as Error).message})`);
    return done();
  }
  const manifestBytes = entries[auditBundlePaths.manifest];
  if (!manifestBytes) {
    problems.push(`no ${auditBundlePaths.manifest} in the bundle`);
    return done();
  }
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(strFromU8(manifestBytes)) as Record<string, unknown>;
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) throw new Error('not a JSON object');
  } catch (error) {
    problems.push(`${auditBundlePaths.manifest} is not a JSON object (${(error as Error).message})`);
    return done();
  }
  if (manifest.kind !== auditManifestKind) problems.push(`${auditBundlePaths.manifest} has kind ${JSON.stringify(manifest.kind)}, expected ${auditManifestKind}`);
  // Bundles built before the field existed lack it; one that has it must have this version.
  if (manifest.artifact_version !== undefined && manifest.artifact_version !== auditManifestArtifactVersion) {
    problems.push(`${auditBundlePaths.manifest} has artifact_version ${JSON.stringify(manifest.artifact_version)}, expected "${auditManifestArtifactVersion}"`);
  }
  if (options.publicKeyHex !== undefined && !hex64.test(options.publicKeyHex)) {
    problems.push('the given public key is not 64 lowercase hex digits');
    return done();
  }
  let signingKeyHex: string | null = null;
  try {
    const verified = verifyArtifact(manifest, options.publicKeyHex ? { trustedPublicKeys: [options.publicKeyHex] } : {});
    signingKeyHex = verified.signingPublicKeyHex;
  } catch (thrown) {
    const error = asServiceError(thrown);
    if (!(error instanceof ServiceError)) throw thrown;
    problems.push(`manifest signature: ${error.code} (${JSON.stringify(error.details ?? {})})`);
  }
  const tenantId = typeof manifest.tenant_realm_id === 'string' ? manifest.tenant_realm_id : null;
  const jobId = typeof manifest.job_id === 'string' ? manifest.job_id : null;

  // Every listed file is present with its digest and size; nothing else is in the ZIP.
  const listed = new Set<string>();
  const artifacts = Array.isArray(manifest.artifacts) ? (manifest.artifacts as unknown[]) : [];
  if (!Array.isArray(manifest.artifacts)) problems.push('manifest artifacts is not a list');
  for (const [artifactIndex, artifact] of artifacts.entries()) {
    options.onProgress?.({ phase: 'files', done: artifactIndex, total: artifacts.length });
    const { path, sha256_hex: digestHex, size_bytes: size } = (artifact ?? {}) as { path?: unknown; sha256_hex?: unknown; size_bytes?: unknown };
    if (typeof path !== 'string' || path === auditBundlePaths.manifest || listed.has(path)) {
      problems.push(`manifest lists an invalid or repeated path ${JSON.stringify(path)}`);
      continue;
    }
    listed.add(path);
    const bytes = entries[path];
    if (!bytes) {
      problems.push(`${path}: listed in the manifest but missing from the bundle`);
      continue;
    }
    if (bytes.length !== size) problems.push(`${path}: ${bytes.length} bytes, the manifest says ${String(size)}`);
    if (bytesToHex(sha256(bytes)) !== digestHex) problems.push(`${path}: SHA-256 does not match the manifest`);
  }
  for (const path of Object.keys(entries)) {
    if (path !== auditBundlePaths.manifest && !listed.has(path)) problems.push(`${path}: in the bundle but not listed in the manifest`);
  }

  const chain = verifyLedgerFiles(entries, tenantId, signingKeyHex ?? options.publicKeyHex ?? null, problems, options.onProgress);
  verifyIntentOutcomes(entries, chain.paidToPayee, problems);
  const manifestSeq = typeof manifest.checkpoint_last_ledger_seq === 'number' ? manifest.checkpoint_last_ledger_seq : 0;
  if (chain.checkpointSeq !== null && chain.checkpointSeq !== manifestSeq) {
    problems.push(`manifest checkpoint_last_ledger_seq is ${manifestSeq}, the checkpoint names ${chain.checkpointSeq}`);
  }
  const log = verifyTransparencyFiles(entries, tenantId, signingKeyHex ?? options.publicKeyHex ?? null, problems);
  return done({
    signingPublicKeyHex: signingKeyHex,
    tenantId,
    jobId,
    files: listed.size,
    ledgerRows: chain.rows,
    checkpointLedgerSeq: chain.checkpointSeq,
    logLeaves: log.leaves,
    treeSize: log.treeSize,
  });
}

/**
 * The transparency log's files: the tree head (of either kind) signed by the manifest's key for the manifest's
 * tenant, and each leaf line's artifact signature, leaf hash (recomputed from the artifact, by the line's leaf format)
 * and audit path under that head. Bundles
 * built before the log existed have neither file; a bundle with one of the two is refused.
 */
function verifyTransparencyFiles(
  entries: Record<string, Uint8Array>,
  tenantId: string | null,
  signingKeyHex: string | null,
  problems: string[],
): { leaves: number; treeSize: number | null } {
  const headBytes = entries[auditBundlePaths.treeHead];
  const leafBytes = entries[auditBundlePaths.logLeaves];
  if (!headBytes && !leafBytes) return { leaves: 0, treeSize: null };
  if (!headBytes || !leafBytes) {
    problems.push(`the bundle needs both ${auditBundlePaths.treeHead} and ${auditBundlePaths.logLeaves}, or neither`);
    return { leaves: 0, treeSize: null };
  }
  let head: SignedTreeHead | null;
  try {
    head = JSON.parse(strFromU8(headBytes)) as SignedTreeHead | null;
  } catch (error) {
    problems.push(`${auditBundlePaths.treeHead} is not JSON (${(error as Error).message})`);
    return { leaves: 0, treeSize: null };
  }
  const lines = strFromU8(leafBytes).split('\n').filter((line) => line !== '');
  // A tenant whose log has no signed head yet exports `null` and no leaves.
  if (head === null) {
    if (lines.length > 0) problems.push(`${auditBundlePaths.logLeaves} has leaves but ${auditBundlePaths.treeHead} has no tree head`);
    return { leaves: 0, treeSize: null };
  }
  const headProblem = checkTreeHead(head, signingKeyHex ? [signingKeyHex] : undefined, auditBundlePaths.treeHead);
  if (headProblem) {
    problems.push(headProblem);
    return { leaves: 0, treeSize: null };
  }
  if (head.tenant_id !== tenantId) problems.push(`${auditBundlePaths.treeHead}: tenant ${head.tenant_id}, the manifest names ${String(tenantId)}`);
  for (const [index, text] of lines.entries()) {
    const where = `${auditBundlePaths.logLeaves} line ${index + 1}`;
    try {
      const line = JSON.parse(text) as LogLeafLine;
      const format = line.leaf_format ?? 1;
      if (!isLogLeafFormat(format)) {
        problems.push(`${where}: leaf_format ${JSON.stringify(format)} is not 1 or 2`);
        continue;
      }
      // The leaf is rebuilt from the artifact, never taken from the line: its hash must be the line's too.
      const leafData = logLeafData(format, artifactLeafBytes(line.artifact));
      if (bytesToHex(merkleLeafHash(leafData)) !== line.leaf_hash) problems.push(`${where}: leaf_hash is not the hash of the artifact's leaf (format ${format})`);
      const inclusion = checkInclusion(leafData, line.leaf_index, head, line.inclusion_proof);
      if (inclusion) problems.push(`${where}: ${inclusion}`);
      if ((line.artifact as { tenant_id?: unknown })?.tenant_id !== undefined && (line.artifact as { tenant_id?: unknown }).tenant_id !== tenantId) {
        problems.push(`${where}: the artifact is of another tenant`);
      }
    } catch (thrown) {
      const error = asServiceError(thrown);
      const code = error instanceof ServiceError ? `${error.code} (${JSON.stringify(error.details ?? {})})` : (error as Error).message;
      problems.push(`${where}: the artifact does not verify: ${code}`);
    }
  }
  return { leaves: lines.length, treeSize: head.tree_size };
}

/** A ledger account that holds what an intent paid its payee (src/engine/ledger-posting.ts names it). */
const isPayeeAccount = (account: string): boolean => account.startsWith('payee:') && account.endsWith(':payable');

/**
 * The outcome each line of intents.jsonl states, against the bundle's ledger: a settled intent's parts
 * (`released_cents`, `refunded_cents`) add up to its amount, and what the ledger's rows of the intent paid its payee
 * is its `released_cents` (0 before it settles). `paidToPayee` is null when the ledger could not be read to its end
 * (that is a problem already). Lines of bundles made before the fields existed have no `released_cents`: unchecked.
 */
function verifyIntentOutcomes(entries: Record<string, Uint8Array>, paidToPayee: ReadonlyMap<string, number> | null, problems: string[]): void {
  const bytes = entries[auditBundlePaths.intents];
  if (!bytes) return;
  const lines = strFromU8(bytes).split('\n').filter((line) => line !== '');
  for (const [index, text] of lines.entries()) {
    const where = `${auditBundlePaths.intents} line ${index + 1}`;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
      if (line === null || typeof line !== 'object' || Array.isArray(line)) throw new Error('not a JSON object');
    } catch (error) {
      problems.push(`${where}: unreadable line (${(error as Error).message})`);
      continue;
    }
    if (!('released_cents' in line)) continue;
    const { intent_id: intentId, amount_cents: amount, released_cents: released, refunded_cents: refunded } = line;
    const settled = Number.isSafeInteger(released) && Number.isSafeInteger(refunded);
    if (!settled && !(released === null && refunded === null)) {
      problems.push(`${where}: released_cents and refunded_cents are not both integers or both null`);
      continue;
    }
    if (settled && (released as number) + (refunded as number) !== amount) {
      problems.push(`${where}: released_cents ${String(released)} and refunded_cents ${String(refunded)} do not add up to amount_cents ${String(amount)}`);
    }
    const paid = paidToPayee?.get(String(intentId)) ?? 0;
    if (paidToPayee !== null && paid !== (released ?? 0)) {
      problems.push(`${where}: ${auditBundlePaths.ledger} paid the payee ${paid}, the intent records released_cents ${String(released)}`);
    }
  }
}

/** ledger.jsonl from genesis: sequence, links, hashes, each body against its columns; then the checkpoint. Also
 * answers what the rows paid each intent's payee (null when a row could not be read). */
function verifyLedgerFiles(
  entries: Record<string, Uint8Array>,
  tenantId: string | null,
  signingKeyHex: string | null,
  problems: string[],
  onProgress?: (progress: AuditBundleProgress) => void,
): { rows: number; checkpointSeq: number | null; paidToPayee: Map<string, number> | null } {
  const ledgerBytes = entries[auditBundlePaths.ledger];
  const checkpointBytes = entries[auditBundlePaths.checkpoint];
  if (!ledgerBytes || !checkpointBytes) {
    problems.push(`the bundle needs ${auditBundlePaths.ledger} and ${auditBundlePaths.checkpoint}`);
    return { rows: 0, checkpointSeq: null, paidToPayee: null };
  }
  let lastSeq = 0;
  let lastHash: Uint8Array = ledgerGenesisRowHash;
  let rows = 0;
  const paidToPayee = new Map<string, number>();
  const lines = strFromU8(ledgerBytes).split('\n').filter((line) => line !== '');
  for (const [index, text] of lines.entries()) {
    onProgress?.({ phase: 'ledger', done: index, total: lines.length });
    const where = `${auditBundlePaths.ledger} line ${index + 1}`;
    let line: LedgerLine;
    try {
      line = JSON.parse(text) as LedgerLine;
      const body = Buffer.from(line.body_hex, 'hex');
      const prev = Buffer.from(line.prev_row_hash_hex, 'hex');
      rows += 1;
      if (line.ledger_seq !== lastSeq + 1) problems.push(`${where}: ledger_seq ${line.ledger_seq}, expected ${lastSeq + 1}`);
      if (!prev.equals(lastHash)) problems.push(`${where}: prev_row_hash is not ${lastSeq === 0 ? 'the genesis hash' : `the row_hash of row ${lastSeq}`}`);
      const rowHash = ledgerRowHash(prev, body);
      if (bytesToHex(rowHash) !== line.row_hash_hex) problems.push(`${where}: row_hash is not SHA-256(prev_row_hash ‖ body)`);
      const expected = encodeLedgerRowBody({
        tenant_id: tenantId ?? '',
        ledger_seq: line.ledger_seq,
        transaction_id: line.transaction_id,
        intent_id: line.intent_id,
        entry_index: line.entry_index,
        account: line.account,
        side: line.side === 'debit' ? 0 : 1,
        amount_cents: line.amount_cents,
        currency: line.currency,
        event_kind: line.event_kind,
        recorded_at: line.recorded_at,
      });
      if (!Buffer.from(expected).equals(body)) problems.push(`${where}: body_hex does not match the row's columns and the manifest's tenant`);
      lastSeq = line.ledger_seq;
      lastHash = Buffer.from(line.row_hash_hex, 'hex');
      if (line.side === 'debit' && isPayeeAccount(line.account)) paidToPayee.set(line.intent_id, (paidToPayee.get(line.intent_id) ?? 0) + line.amount_cents);
    } catch (error) {
      problems.push(`${where}: unreadable row (${(error as Error).message})`);
      return { rows, checkpointSeq: null, paidToPayee: null };
    }
  }

  let checkpoint: LedgerCheckpoint;
  try {
    checkpoint = JSON.parse(strFromU8(checkpointBytes)) as LedgerCheckpoint;
  } catch (error) {
    problems.push(`${auditBundlePaths.checkpoint} is not JSON (${(error as Error).message})`);
    return { rows, checkpointSeq: null, paidToPayee };
  }
  const fields = { tenant_id: checkpoint.tenant_id, ledger_seq: checkpoint.ledger_seq, row_hash_hex: checkpoint.row_hash_hex, issued_at: checkpoint.issued_at };
  const digest = sha256(ledgerCheckpointBytes(fields));
  if (bytesToHex(digest) !== checkpoint.message_digest_sha256_hex) problems.push('checkpoint: message_digest_sha256_hex does not match its fields');
  if (signingKeyHex !== null && checkpoint.signing_public_key_ed25519_hex !== signingKeyHex) {
    problems.push('checkpoint: signed by another key than the manifest');
  }
  try {
    const key = ed25519PublicKey(Buffer.from(String(checkpoint.signing_public_key_ed25519_hex), 'hex'));
    if (!verifyEd25519(key, digest, Buffer.from(String(checkpoint.ed25519_signature_hex), 'hex'))) problems.push('checkpoint: Ed25519 signature does not verify');
  } catch {
    problems.push('checkpoint: signing_public_key_ed25519_hex is not an Ed25519 public key');
  }
  if (checkpoint.tenant_id !== tenantId) problems.push(`checkpoint: tenant ${checkpoint.tenant_id}, the manifest names ${String(tenantId)}`);
  if (checkpoint.ledger_seq !== lastSeq || checkpoint.row_hash_hex !== bytesToHex(lastHash)) {
    problems.push(`checkpoint names seq ${checkpoint.ledger_seq} (${checkpoint.row_hash_hex}), ${auditBundlePaths.ledger} ends at seq ${lastSeq} (${bytesToHex(lastHash)})`);
  }
  return { rows, checkpointSeq: typeof checkpoint.ledger_seq === 'number' ? checkpoint.ledger_seq : null, paidToPayee };
}
