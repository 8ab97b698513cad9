// `svc receipt verify FILE`: checks a receipt offline (docs/protocol.md#verifying-offline): its signature against the
// deployment's published keys, its inclusion under a signed tree head, and that a later head extends that one.
import {
  artifactLeafBytes,
  checkConsistency,
  checkInclusion,
  checkTreeHead,
  trustedKeysFromJwks,
  type SignedTreeHead,
} from '../../services/transparency-log.ts';
import { isStandingArtifact, verifyStandingArtifact } from '../../signing/standing-artifacts.ts';
import { print, readInputFile, requiredOption, UsageError, usageOf, type CliCommand, type Options } from '../command.ts';

/** Where a receipt file keeps what: a read route's answer saved as is, or the bare signed receipt. */
interface ReceiptFile {
  readonly receipt: Record<string, unknown>;
  readonly leafIndex: number | undefined;
  readonly treeHead: unknown;
  readonly inclusionProof: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the receipt file. A read answer holds the signed receipt under `receipt`, its `leaf_index`, and under
 * `inclusion_proof` either the log position (`{leaf_index, tree_head, inclusion_proof}`) or the audit path itself
 * with `tree_head` beside it. A bare signed receipt has neither, and only its signature can be checked.
 */
export function readReceiptFile(value: unknown): ReceiptFile {
  if (!isObject(value)) throw new Error('the receipt file is not a JSON object');
  if (!isObject(value.receipt)) return { receipt: value, leafIndex: undefined, treeHead: undefined, inclusionProof: undefined };
  const position = value.inclusion_proof;
  const leafIndex = typeof value.leaf_index === 'number' ? value.leaf_index : isObject(position) && typeof position.leaf_index === 'number' ? position.leaf_index : undefined;
  if (isObject(position)) return { receipt: value.receipt, leafIndex, treeHead: position.tree_head ?? undefined, inclusionProof: position.inclusion_proof ?? undefined };
  return { receipt: value.receipt, leafIndex, treeHead: value.tree_head ?? undefined, inclusionProof: position ?? undefined };
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

/** Every check the inputs allow, each problem in words. */
export function verifyReceiptFile(
  file: ReceiptFile,
  inputs: { trustedKeysHex: string[] | undefined; treeHead?: unknown; consistency?: unknown },
): ReceiptReport {
  const checked: string[] = [];
  const problems: string[] = [];
  // Standing artifacts (operator receipts, portfolio snapshots; docs/standing.md) are signed but not logged: only
  // their signature is checked.
  if (isStandingArtifact(file.receipt)) {
    const standing = file.receipt;
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
  const note = (problem: string | null, done: string) => (problem === null ? checked.push(done) : problems.push(problem));
  const receipt = file.receipt;
  let leafBytes: Uint8Array | undefined;
  try {
    leafBytes = artifactLeafBytes(receipt, inputs.trustedKeysHex);
    checked.push(inputs.trustedKeysHex ? 'signature, by a published key' : 'signature, by its embedded key (not pinned: pass --jwks or --server)');
  } catch (error) {
    problems.push(`the receipt does not verify: ${(error as { code?: string }).code ?? (error as Error).message}`);
  }
  const head = file.treeHead as SignedTreeHead | undefined;
  if (leafBytes && head !== undefined) {
    const headProblem = checkTreeHead(head, inputs.trustedKeysHex, "the receipt's tree head");
    if (headProblem) problems.push(headProblem);
    else if (head.tenant_id !== receipt.tenant_id) problems.push(`the tree head is of tenant ${head.tenant_id}, the receipt of ${String(receipt.tenant_id)}`);
    else if (file.leafIndex === undefined) problems.push('the receipt file has a tree head but no leaf_index');
    else note(checkInclusion(leafBytes, file.leafIndex, head, file.inclusionProof), `inclusion of leaf ${file.leafIndex} under the signed head of ${head.tree_size} leaves`);
  } else if (leafBytes) {
    checked.push('no tree head covers the receipt yet (fetch it again in a few seconds for its inclusion proof)');
  }
  if (inputs.treeHead !== undefined) {
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
  return {
    ok: problems.length === 0,
    kind: typeof receipt.kind === 'string' ? receipt.kind : undefined,
    receiptId: typeof receipt.receipt_id === 'string' ? receipt.receipt_id : undefined,
    tenantId: typeof receipt.tenant_id === 'string' ? receipt.tenant_id : undefined,
    keysPinned: inputs.trustedKeysHex !== undefined,
    leafIndex: file.leafIndex,
    treeSize: head?.tree_size,
    checked,
    problems,
  };
}

export const receiptVerify: CliCommand = {
  name: 'receipt verify',
  summary: 'Verifies a receipt offline: signature, inclusion in the transparency log, consistency of two tree heads; exit 1 on a problem.',
  synopsis: 'FILE [--tree-head FILE [--consistency FILE]] [--jwks FILE | --server URL] [--json]',
  positional: 'receipt',
  details: [
    'FILE                    a receipt as a read route answers it, saved as is (GET /protocol/v2/receipts/{id},',
    '                        GET /protocol/v2/agent-receipts/{id}), or the bare signed receipt (signature only)',
    '                        ; a standing receipt (GET /reputation/{operator_did}) or portfolio snapshot',
    '                        (GET /signal/v1/portfolio/signed-export) saved as is: signature only (not logged)',
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
  options: { 'tree-head': { type: 'string' }, consistency: { type: 'string' }, jwks: { type: 'string' }, server: { type: 'string' } },
  async run({ options, json }) {
    const receiptPath = requiredOption(receiptVerify, options, 'receipt');
    const file = readReceiptFile(readJson(receiptPath, 'receipt file'));
    const treeHead = typeof options['tree-head'] === 'string' ? readJson(options['tree-head'], 'tree head') : undefined;
    const consistency = typeof options.consistency === 'string' ? readJson(options.consistency, 'consistency proof') : undefined;
    const report = verifyReceiptFile(file, { trustedKeysHex: await trustedKeys(options), treeHead, consistency });
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
