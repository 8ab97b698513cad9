// A package user's first script: plain Node, no TypeScript, the SDK from the installed tarball. Copied into an empty
// folder and run by test/sdk/package-install.test.ts with SVC_API_KEY and SVC_GATEWAY_URL set (a sandbox tenant);
// it prints one JSON line per step, which the test reads.
import { generateKey, sandboxCredential, SvcClient } from 'svc-settlement/sdk';

const report = (step, fields) => console.log(JSON.stringify({ step, ...fields }));

report('resolved', { url: import.meta.resolve('svc-settlement/sdk') });
const client = await SvcClient.open({ expectedEnvironment: 'sandbox' });
report('opened', { tenant: client.tenantId, environment: client.environment });

const principal = { did: 'did:example:alice', key: generateKey().key };
const payee = { did: 'did:example:search-vendor', key: generateKey().key };
const intent = await client.intents.create({
  principal,
  payee: { did: payee.did, publicKey: payee.key },
  amountCents: 250,
  deadline: new Date(Date.now() + 3_600_000),
  settlementRail: 'x402_usdc_base',
  allowedTools: ['search.web'],
  evidenceSchema: { type: 'object', properties: { status: { type: 'string' }, cost_cents: { type: 'integer' } }, required: ['status'] },
  predicate: { version: 1, root: { op: 'and', clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }] } },
});
report('created', { intent_id: intent.intent_id, state: intent.state, signing_version: intent.signing_version });

const funded = await client.intents.fund(intent.intent_id, { credential: sandboxCredential() });
report('funded', { state: funded.intent.state, funding: funded.intent.funding?.status, capability_token: typeof funded.capabilityToken });

const evidence = await client.intents.submitEvidence(intent.intent_id, { payee, payload: { status: 'completed', cost_cents: 120 } });
report('evidence', { state: evidence.state, predicate_passed: evidence.predicate_passed });

const settled = await client.intents.confirm(intent.intent_id, { expectedAction: 'release' });
report('confirmed', { state: settled.state, action: settled.settlement.action, reason: settled.settlement.reason });

// The client-side chain check runs the built signing core (row bodies, hashes, Ed25519) from the package.
const ledger = await client.ledger.verifyChain();
report('ledger', { ok: ledger.ok, rows: ledger.rows, problems: ledger.problems });
