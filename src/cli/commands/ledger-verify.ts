// `svc ledger verify`: recomputes a tenant's ledger chain and balances; exit 1 on any problem. Shows progress on a
// terminal while it reads.
import { verifyTenantLedger, type LedgerVerifyReport } from '../../services/ledger-verifier.ts';
import { print, requiredOption, withDatabase, type CliCommand } from '../command.ts';
import { createProgress } from '../progress.ts';

/** Escrow accounts are one per intent, so the text form sums them; --json lists every account. Balances are bigint
 * and summed as bigint: a tenant's balances are not bounded by any limit and pass 2^53 cents (docs/ledger.md).
 * Amounts are minor units of each intent's currency, and say so. */
export function ledgerReportText(report: LedgerVerifyReport): string {
  const lines = [`ledger of ${report.tenantId}: ${report.rows} rows, ${report.transactions} transactions, tip ${report.tipSeq} ${report.tipRowHashHex}`];
  let escrowCents = 0n;
  let escrowAccounts = 0;
  for (const [account, cents] of Object.entries(report.balances)) {
    if (/^intent:.*:escrow$/.test(account)) {
      escrowCents += cents;
      escrowAccounts += 1;
    } else {
      lines.push(`  ${account}  ${cents} cents`);
    }
  }
  lines.push(`  escrow (${escrowAccounts} intents)  ${escrowCents} cents`);
  lines.push(report.ok ? 'ok: no problems found' : `${report.problems.length} problem(s):`, ...report.problems.map((problem) => `  - ${problem}`));
  return lines.join('\n');
}

export const ledgerVerify: CliCommand = {
  name: 'ledger verify',
  summary: 'Recomputes the tenant\'s ledger chain and balances; exit 1 on any problem.',
  synopsis: '--tenant-id ID [--json]',
  details: [
    '--tenant-id ID          the tenant whose ledger to verify',
    '--json                  print the report as one JSON line (balances as decimal strings of cents)',
    '',
    'Balances are in cents (minor units of each intent\'s currency). On a terminal, progress is shown on stderr.',
  ],
  options: { 'tenant-id': { type: 'string' } },
  async run({ options, json, config }) {
    const tenantId = requiredOption(ledgerVerify, options, 'tenant-id');
    const progress = createProgress({ json });
    const label = `ledger verify: reading the ledger of ${tenantId}`;
    const report = await progress.during(
      label,
      withDatabase(config, (database) => verifyTenantLedger(database, tenantId, { onProgress: (rowsChecked) => progress.update(`${label}: ${rowsChecked} rows checked`) })),
    );
    print(
      json,
      {
        tenant_id: report.tenantId,
        ok: report.ok,
        rows: report.rows,
        transactions: report.transactions,
        tip_seq: report.tipSeq,
        tip_row_hash_hex: report.tipRowHashHex,
        problems: report.problems,
        // Decimal strings, always: a JSON number past 2^53 is rounded by most readers (docs/ledger.md).
        balances: Object.fromEntries(Object.entries(report.balances).map(([account, cents]) => [account, cents.toString()])),
      },
      ledgerReportText(report),
    );
    if (!report.ok) process.exitCode = 1;
  },
};
