// `svc receipt verify FILE`: checks a receipt offline (docs/protocol.md#verifying-offline): its signature against the
// deployment's published keys, its inclusion under a signed tree head, and that a later head extends that one. It
// takes what the service answers now (the bare signed receipt, and its inclusion proof) and what it answered before
// (a read answer that carried the receipt with its log position).
import fs from 'node:fs';
import {
  artifactLeafBytes,
  checkConsistency,
  checkInclusion,
  checkInclusionProofDocument,
  checkTreeHead,
  trustedKeysFromJwks,
  type SignedTreeHead,
} from '../../receipts/transparency-log.ts';
import { logLeafData } from '../../signing/merkle.ts';
import { isStandingArtifact, verifyStandingArtifact } from '../../signing/standing-artifacts.ts';
import { print, readInputFile, requiredOption, UsageError, usageOf, type CliCommand, type Options } from '../command.ts';

/** Where the receipt's place in the log comes from: an inclusion-proof document (GET …/inclusion-proof), or the log
 * position a read answer carried before the change (its leaves hash the canonical bytes). */
type LogPlacement =
  | { readonly from: 'document'; readonly document: Record<string, unknown> }
  | { readonly from: 'read_answer'; readonly leafIndex: number | undefined; readonly treeHead: unknown; readonly auditPath: unknown };

/** What a receipt file holds: the signed receipt, and its place in the log when the file says it. */
interface ReceiptFile {
  readonly receipt: Record<string, unknown>;
  readonly placement: LogPlacement | undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the receipt file: the bare signed receipt (what the read routes answer now), or a read answer as the service
 * gave it before, the signed receipt under `receipt`, its `leaf_index`, and under `inclusion_proof` either the log
 * position (`{leaf_index, tree_head, inclusion_proof}`) or the audit path itself with `tree_head` beside it.
 */
export function readReceiptFile(value: unknown): ReceiptFile {
  if (!isObject(value)) throw new Error('the receipt file is not a JSON object');
  if (!isObject(value.receipt)) return { receipt: value, placement: undefined };
  const position = value.inclusion_proof;
  const leafIndex = typeof value.leaf_index === 'number' ? value.leaf_index : isObject(position) && typeof position.leaf_index === 'number' ? position.leaf_index : undefined;
  const placement: LogPlacement = isObject(position)
    ? { from: 'read_answer', leafIndex, treeHead: position.tree_head ?? undefined, auditPath: position.inclusion_proof ?? undefined }
    : { from: 'read_answer', leafIndex, treeHead: value.tree_head ?? undefined, auditPath: position ?? undefined };
  return { receipt: value.receipt, placement: placement.treeHead === undefined ? undefined : placement };
}

function readJson(path: string, what: string): unknown {
  const text = readInputFile(receiptVerify, `the ${what}`, path).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`the ${what} ${path} is not JSON`, usageOf(receiptVerify));
  }
}

/** The keys to trust: a JWKS file, or the deployment's published set fetched from --server. */
async function trustedKeys(options: Options): Promise<string[] | undefined> {
  if (typeof options.jwks === 'string' && typeof options.server === 'string') {
    throw new UsageError('give --jwks or --server, not both', usageOf(receiptVerify));
  }
  if (typeof options.jwks === 'string') return trustedKeysFromJwks(readJson(options.jwks, 'JWKS'));
  if (typeof options.server !== 'string') return undefined;
  const url = new URL('/.well-known/jwks.json', options.server);
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET ${url.href} answered ${response.status}`);
  return trustedKeysFromJwks(await response.json());
}

export interface ReceiptReport {
  readonly ok: boolean;
  readonly kind: string | undefined;
  readonly receiptId: string | undefined;
  readonly tenantId: string | undefined;
  readonly keysPinned: boolean;
  readonly leafIndex: number | undefined;
  readonly treeSize: number | undefined;
  readonly checked: string[];
  readonly problems: string[];
}

/** Every check the inputs allow, each problem in words. `inclusionProof` is an inclusion-proof document given beside
 * the receipt file (it wins over a log position the file itself carries). */
export function verifyReceiptFile(
  file: ReceiptFile,
  inputs: { trustedKeysHex: string[] | undefined; inclusionProof?: unknown; treeHead?: unknown; consistency?: unknown },
): ReceiptReport {
  const checked: string[] = [];
  const problems: string[] = [];
  // Standing artifacts (operator receipts, portfolio snapshots; docs/standing.md) are signed but not logged: only
  // their signature is checked.
  if (isStandingArtifact(file.receipt)) return verifyStandingFile(file.receipt, inputs);
  const note = (problem: string | null, done: string) => (problem === null ? checked.push(done) : problems.push(problem));
  const receipt = file.receipt;
  let canonicalBytes: Uint8Array | undefined;
  try {
    canonicalBytes = artifactLeafBytes(receipt, inputs.trustedKeysHex);
    checked.push(inputs.trustedKeysHex ? 'signature, by a published key' : 'signature, by its embedded key (not pinned: pass --jwks or --server)');
  } catch (error) {
    problems.push(`the receipt does not verify: ${(error as { code?: string }).code ?? (error as Error).message}`);
  }
  const placement: LogPlacement | undefined = inputs.inclusionProof !== undefined
    ? { from: 'document', document: isObject(inputs.inclusionProof) ? inputs.inclusionProof : {} }
    : file.placement;
  let head: SignedTreeHead | undefined;
  let leafIndex: number | undefined;
  if (canonicalBytes && placement !== undefined) {
    const candidate = (placement.from === 'document' ? placement.document.tree_head : placement.treeHead) as SignedTreeHead | undefined;
    leafIndex = placement.from === 'document' ? (placement.document.leaf_index as number | undefined) : placement.leafIndex;
    const headProblem = checkTreeHead(candidate, inputs.trustedKeysHex, "the receipt's tree head");
    if (headProblem) problems.push(headProblem);
    else {
      head = candidate!;
      const done = `inclusion of leaf ${String(leafIndex)} under the signed head of ${head.tree_size} leaves`;
      if (head.tenant_id !== receipt.tenant_id) problems.push(`the tree head is of tenant ${head.tenant_id}, the receipt of ${String(receipt.tenant_id)}`);
      else if (placement.from === 'document') note(checkInclusionProofDocument(placement.document, receipt, canonicalBytes), done);
      else if (leafIndex === undefined) problems.push('the receipt file has a tree head but no leaf_index');
      // A read answer of before the change proves a leaf of the canonical bytes; one served while replicas of both
      // versions ran may prove a leaf of the digest. Either leaf holds, the other cannot.
      else if (checkInclusion(logLeafData(1, canonicalBytes), leafIndex, head, placement.auditPath) === null) checked.push(done);
      else note(checkInclusion(logLeafData(2, canonicalBytes), leafIndex, head, placement.auditPath), done);
    }
  } else if (canonicalBytes) {
    checked.push('not checked against the log: pass --inclusion-proof FILE (GET …/inclusion-proof saved as is)');
  }
  if (inputs.treeHead !== undefined) compareWithGivenHead(head, inputs, checked, problems);
  return {
    ok: problems.length === 0,
    kind: typeof receipt.kind === 'string' ? receipt.kind : undefined,
    receiptId: typeof receipt.receipt_id === 'string' ? receipt.receipt_id : undefined,
    tenantId: typeof receipt.tenant_id === 'string' ? receipt.tenant_id : undefined,
    keysPinned: inputs.trustedKeysHex !== undefined,
    leafIndex,
    treeSize: head?.tree_size,
    checked,
    problems,
  };
}

/** A standing artifact: its signature, nothing else (it is not logged). */
function verifyStandingFile(standing: Record<string, unknown>, inputs: { trustedKeysHex: string[] | undefined; treeHead?: unknown }): ReceiptReport {
  const checked: string[] = [];
  const problems: string[] = [];
  try {
    verifyStandingArtifact(standing, inputs.trustedKeysHex ?? []);
    checked.push(inputs.trustedKeysHex ? 'signature, by a published key' : 'signature, by its embedded key (not pinned: pass --jwks or --server)');
  } catch (error) {
    problems.push(`the artifact does not verify: ${(error as { code?: string }).code ?? (error as Error).message}`);
  }
  if (inputs.treeHead !== undefined) problems.push('standing artifacts are not in the transparency log: --tree-head does not apply');
  const receiptId = typeof standing.operator_did === 'string' ? standing.operator_did : undefined;
  return { ok: problems.length === 0, kind: standing.kind as string, receiptId, tenantId: standing.tenant_id as string, keysPinned: inputs.trustedKeysHex !== undefined, leafIndex: undefined, treeSize: undefined, checked, problems };
}

/** The receipt's head against a head the user kept (--tree-head): the same, or consistent by --consistency. Heads of
 * either kind compare, since both kinds sign roots of the one tree. */
function compareWithGivenHead(
  head: SignedTreeHead | undefined,
  inputs: { trustedKeysHex: string[] | undefined; treeHead?: unknown; consistency?: unknown },
  checked: string[],
  problems: string[],
): void {
  const note = (problem: string | null, done: string) => (problem === null ? checked.push(done) : problems.push(problem));
  const given = inputs.treeHead as SignedTreeHead;
  const givenProblem = checkTreeHead(given, inputs.trustedKeysHex, 'the --tree-head file');
  if (givenProblem) problems.push(givenProblem);
  else if (head === undefined) problems.push('the receipt carries no tree head to compare with --tree-head');
  else if (given.tree_size === head.tree_size) note(checkConsistency(head, given, []), `the given head of ${given.tree_size} leaves is the receipt's head`);
  else if (inputs.consistency === undefined) problems.push(`the heads differ in size (${head.tree_size}, ${given.tree_size}): pass --consistency FILE (GET /harbor/ledger/v1/merkle/consistency?first=${Math.min(head.tree_size, given.tree_size)}&second=${Math.max(head.tree_size, given.tree_size)})`);
  else {
    const proof = isObject(inputs.consistency) ? inputs.consistency.consistency_proof : undefined;
    note(checkConsistency(head, given, proof), `the log of ${Math.max(head.tree_size, given.tree_size)} leaves extends the log of ${Math.min(head.tree_size, given.tree_size)}`);
  }
}

export const receiptVerify: CliCommand = {
  name: 'receipt verify',
  summary: 'Verifies a receipt offline: signature, inclusion in the transparency log, consistency of two tree heads; exit 1 on a problem.',
  synopsis: 'FILE [--inclusion-proof FILE] [--tree-head FILE [--consistency FILE]] [--jwks FILE | --server URL] [--json]',
  positional: 'receipt',
  details: [
    'FILE                    a receipt as a read route answers it, saved as is (GET /protocol/v2/receipts/{id},',
    '                        GET /protocol/v2/agent-receipts/{id}); a read answer saved before the receipts were',
    '                        served bare (the receipt under "receipt", with its log position) is checked in full;',
    '                        a standing receipt (GET /reputation/{operator_did}) or portfolio snapshot',
    '                        (GET /signal/v1/portfolio/signed-export) saved as is: signature only (not logged)',
    '--inclusion-proof FILE  the receipt\'s inclusion proof (GET …/{id}/inclusion-proof saved as is): its leaf,',
    '                        recomputed from the receipt, under the signed tree head the proof carries',
    '--tree-head FILE        a signed tree head you hold (GET /harbor/ledger/v1/merkle/latest saved as is): the',
    '                        receipt\'s head must be it, or be consistent with it',
    '--consistency FILE      when the two heads differ in size: GET /harbor/ledger/v1/merkle/consistency?first=&second=',
    '                        saved as is',
    '--jwks FILE             the deployment\'s published keys (GET /.well-known/jwks.json saved as is)',
    '--server URL            fetch those keys from the deployment instead',
    '--json                  print the report as one JSON line',
    '',
    'Without --jwks or --server, signatures are checked against the keys the artifacts embed: that proves integrity,',
    'not origin.',
  ],
  options: { 'inclusion-proof': { type: 'string' }, 'tree-head': { type: 'string' }, consistency: { type: 'string' }, jwks: { type: 'string' }, server: { type: 'string' } },
  async run({ options, json }) {
    const receiptPath = requiredOption(receiptVerify, options, 'receipt');
    const file = readReceiptFile(readJson(receiptPath, 'receipt file'));
    const inclusionProof = typeof options['inclusion-proof'] === 'string' ? readJson(options['inclusion-proof'], 'inclusion proof') : undefined;
    const treeHead = typeof options['tree-head'] === 'string' ? readJson(options['tree-head'], 'tree head') : undefined;
    const consistency = typeof options.consistency === 'string' ? readJson(options.consistency, 'consistency proof') : undefined;
    const report = verifyReceiptFile(file, { trustedKeysHex: await trustedKeys(options), inclusionProof, treeHead, consistency });
    const lines = [
      `receipt ${report.receiptId ?? '?'} (${report.kind ?? '?'}) of ${report.tenantId ?? '?'}`,
      ...report.checked.map((line) => `  ok: ${line}`),
      report.ok ? 'ok: no problems found' : `${report.problems.length} problem(s):`,
      ...report.problems.map((problem) => `  - ${problem}`),
    ];
    print(
      json,
      {
        ok: report.ok,
        kind: report.kind,
        receipt_id: report.receiptId,
        tenant_id: report.tenantId,
        keys_pinned: report.keysPinned,
        leaf_index: report.leafIndex ?? null,
        tree_size: report.treeSize ?? null,
        checked: report.checked,
        problems: report.problems,
      },
      lines.join('\n'),
    );
    if (!report.ok) process.exitCode = 1;
  },
};
