// The one-minute example (`npm run example`): a paid tool guarded by an escrowed intent on a sandbox tenant —
// open a session, publish a metered release rule, create and sign an intent bound to it, fund it through the 402
// handshake, verify the capability before the tool runs, submit signed evidence of what the call cost, confirm the
// settlement (the cost to the payee, the rest back to the principal), and verify the ledger on the client.
// Needs SVC_API_KEY.
import { decodeX402PaymentRequired, generateKey, sandboxCredential, SvcClient, SvcError, type FundChallenge } from 'svc-settlement/sdk';

const apiKey = process.env['SVC_API_KEY'];
if (!apiKey) {
  console.error('Set SVC_API_KEY to a sandbox tenant\'s key: npx svc tenant create --tenant-id example --environment sandbox --json');
  process.exit(2);
}

let stepNumber = 0;
const step = (title: string, ...details: string[]) => {
  stepNumber += 1;
  console.log(`${stepNumber}. ${title}`);
  for (const detail of details) console.log(`   ${detail}`);
};

/** An amount in minor units with its unit, e.g. "250 cents (2.50 usd)": the API counts cents, people read dollars. */
function amountText(cents: number, currency: string): string {
  // The currency's own number of decimals (2 for usd, 0 for jpy), from the runtime's ISO 4217 table.
  const decimals = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return `${cents} cents (${(cents / 10 ** decimals).toFixed(decimals)} ${currency})`;
}

/** The paid tool: a search API that charges per call. Here it answers locally; a real one would call a vendor. */
async function paidSearch(query: string): Promise<{ results: string[]; costCents: number; vendorRef: string }> {
  return { results: [`${query}: result 1`, `${query}: result 2`], costCents: 120, vendorRef: `srch_${Date.now()}` };
}

async function main(): Promise<void> {
  // Base URL: SVC_GATEWAY_URL, else SVC_GATEWAY_BASE_URL, else http://127.0.0.1:8080. The tenant comes from the key.
  const client = await SvcClient.open({ apiKey, expectedEnvironment: 'sandbox' });
  step('Session opened', `tenant ${client.tenantId} (${client.environment}) at ${client.gatewayBaseUrl}`);

  // The principal pays; the payee (the tool's vendor) is paid on release. Each signs with its own Ed25519 key.
  const principal = { did: 'did:example:principal-alice', key: generateKey().key };
  const payee = { did: 'did:example:search-vendor', key: generateKey().key };
  // The release rule, metered: release only if the search completed within the escrowed amount, and then only what
  // the payee's evidence says it cost; the rest goes back. The principal signs the version's digest with the intent.
  const rule = await client.policies.publish({ templateId: 'completion_budget_v1', parameters: { release_mode: 'metered' } });
  step('Metered release rule published', `${rule.template_id} version ${rule.version_seq}: ${rule.human_summary}`);
  const intent = await client.intents.create({
    principal,
    payee: { did: payee.did, publicKey: payee.key },
    amountCents: 250,
    currency: 'usd',
    deadline: new Date(Date.now() + 60 * 60 * 1000),
    settlementRail: 'x402_usdc_base',
    allowedTools: ['search.web'],
    evidenceSchema: { type: 'object', properties: { status: { type: 'string' }, cost_cents: { type: 'integer' }, vendor_ref: { type: 'string' } }, required: ['status', 'cost_cents'] },
    policyBinding: rule,
  });
  step('Intent created and signed by the principal (signing v7, bound to the rule)', `intent ${intent.intent_id}: ${amountText(intent.amount_cents, intent.currency)} on ${intent.settlement_rail}, state ${intent.state}`);

  const funded = await client.intents.fund(intent.intent_id, {
    credential: (challenge: FundChallenge) => {
      const offer = decodeX402PaymentRequired(challenge.paymentRequired!).accepts[0]!;
      console.log(`   402 challenge: pay ${offer['amount']} USDC base units on ${offer['network']} to ${offer['payTo']}`);
      return sandboxCredential('success')(challenge);
    },
  });
  step('Intent funded through the x402 402 handshake', `state ${funded.intent.state}, funding ${funded.intent.funding?.status}, capability token ${funded.capabilityToken.slice(0, 16)}…`);

  const search = await client.capabilities.guard(
    { intentId: intent.intent_id, token: funded.capabilityToken, operation: 'search.web', requestedSpendCents: 120 },
    async (decision) => {
      step('Capability verified before the tool runs', `allow ${decision.allow}, decision ${decision.decision_id}, ${amountText(decision.remaining_cents ?? 0, intent.currency)} left`);
      return paidSearch('escrow for agents');
    },
  );
  step('Paid tool ran; its spend decision was completed as consumed', `${search.results.length} results, cost ${amountText(search.costCents, intent.currency)}, vendor ref ${search.vendorRef}`);

  const evidence = await client.intents.submitEvidence(intent.intent_id, {
    payee,
    payload: { status: 'completed', cost_cents: search.costCents, vendor_ref: search.vendorRef },
  });
  step('Evidence signed by the payee and evaluated', `predicate passed: ${evidence.predicate_passed}, state ${evidence.state}`);

  const settled = await client.intents.confirm(intent.intent_id, { expectedAction: 'split' });
  // A tenant whose release gate is in critical_hold may see the release held for review instead (docs/release-gate.md).
  const { settlement } = settled;
  step(
    'Settlement confirmed',
    settlement ? `state ${settled.state}: ${settlement.action} (${settlement.reason}), ledger transaction ${settlement.transaction_id}` : `state ${settled.state}: held for review`,
    `released ${amountText(settled.released_cents ?? 0, intent.currency)} to the payee, refunded ${amountText(settled.refunded_cents ?? 0, intent.currency)} to the principal`,
  );

  const ledger = await client.ledger.verifyChain();
  step(
    'Ledger verified on the client',
    `${ledger.rows} rows, ${ledger.transactions} transactions, tip ${ledger.tipSeq} ${ledger.tipRowHashHex}`,
    `checkpoint at ${ledger.checkpoint.ledgerSeq} signed by ${ledger.checkpoint.kid}: signature ${ledger.checkpoint.signatureValid ? 'valid' : 'INVALID'}, chain ${ledger.checkpoint.chainMatches ? 'matches' : 'DOES NOT MATCH'}`,
    `payee payable ${amountText(Number(ledger.balances[`payee:${payee.did}:payable`] ?? 0), intent.currency)}, principal refund ${amountText(Number(ledger.balances[`payer:${principal.did}:refund`] ?? 0), intent.currency)}`,
  );
  if (!ledger.ok) throw new Error(`ledger problems: ${ledger.problems.join('; ')}`);
  console.log('ledger verified');
}

main().catch((error: unknown) => {
  if (error instanceof SvcError) console.error(`${error.name}: ${error.message}`);
  else console.error(error);
  process.exit(1);
});
