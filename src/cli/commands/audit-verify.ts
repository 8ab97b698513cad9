// `svc audit verify`: checks an audit bundle offline (no database, no network), showing progress on a terminal.
import { verifyAuditBundle } from '../../services/audit-bundle.ts';
import { print, readInputFile, requiredOption, UsageError, usageOf, type CliCommand } from '../command.ts';
import { createProgress } from '../progress.ts';

export const auditVerify: CliCommand = {
  name: 'audit verify',
  summary: 'Verifies an audit bundle offline; exit 1 when it has a problem.',
  synopsis: '--bundle FILE [--public-key HEX] [--json]',
  details: [
    '--bundle FILE           the downloaded bundle (a ZIP)',
    '--public-key HEX        the gateway key to check the manifest against (GET /harbor/ledger/v1/authority);',
    '                        without it the manifest is checked against its own embedded key, which proves',
    '                        integrity but not origin',
    '--json                  print the report as one JSON line',
    '',
    'Checks the signed manifest, every file\'s digest and size, the ledger chain and its signed checkpoint, and the',
    'transparency log: the signed tree head, and each receipt\'s signature and inclusion proof under it.',
    'On a terminal, the files and ledger lines checked so far are shown on stderr.',
  ],
  options: { bundle: { type: 'string' }, 'public-key': { type: 'string' } },
  async run({ options, json }) {
    const bundlePath = requiredOption(auditVerify, options, 'bundle');
    const publicKeyHex = typeof options['public-key'] === 'string' ? options['public-key'].toLowerCase() : undefined;
    // A key that is not even a key is a wrong command line, said before any work, not a problem of the bundle.
    if (publicKeyHex !== undefined && !/^[0-9a-f]{64}$/.test(publicKeyHex)) {
      throw new UsageError('--public-key must be 64 hex digits: an Ed25519 public key, as GET /harbor/ledger/v1/authority answers it', usageOf(auditVerify));
    }
    const bundle = readInputFile(auditVerify, '--bundle', bundlePath);
    const progress = createProgress({ json });
    progress.update(`audit verify: reading ${bundlePath}`);
    const report = verifyAuditBundle(new Uint8Array(bundle), {
      publicKeyHex,
      onProgress: ({ phase, done, total }) => progress.update(`audit verify: ${phase === 'files' ? 'file' : 'ledger line'} ${done + 1}/${total}`),
    });
    progress.finish();
    const keyText = report.keySource === 'given' ? 'the given public key' : `the manifest's embedded key ${report.signingPublicKeyHex ?? '(unreadable)'} (not pinned: pass --public-key to check origin)`;
    // A bundle whose manifest could not be read has no job, tenant or contents to tell: only its problems.
    const summary = report.jobId === null && report.tenantId === null
      ? [`bundle ${bundlePath}: not verified, its manifest could not be read`]
      : [
        `bundle ${bundlePath}: job ${report.jobId ?? '(none)'} of ${report.tenantId ?? '(none)'}, ${report.files} files, ${report.ledgerRows} ledger rows, checkpoint seq ${report.checkpointLedgerSeq ?? '(none)'}`,
        report.treeSize === null ? 'transparency log: no signed tree head in the bundle' : `transparency log: ${report.logLeaves} leaves proven under the signed tree head of ${report.treeSize} leaves`,
        `manifest checked against ${keyText}`,
      ];
    const lines = [...summary, report.ok ? 'ok: no problems found' : `${report.problems.length} problem(s):`, ...report.problems.map((problem) => `  - ${problem}`)];
    print(
      json,
      {
        ok: report.ok,
        key_source: report.keySource,
        signing_public_key_hex: report.signingPublicKeyHex,
        tenant_realm_id: report.tenantId,
        job_id: report.jobId,
        files: report.files,
        ledger_rows: report.ledgerRows,
        checkpoint_last_ledger_seq: report.checkpointLedgerSeq,
        log_leaves: report.logLeaves,
        tree_size: report.treeSize,
        problems: report.problems,
      },
      lines.join('\n'),
    );
    if (!report.ok) process.exitCode = 1;
  },
};
