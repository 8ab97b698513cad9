// A TypeScript user's code against the SDK's declarations. test/sdk/package-install.test.ts type-checks it inside an
// empty folder where the packed tarball is installed (so against dist/**/*.d.ts); the repository's own `tsc -p .`
// checks it against the sources. The `@ts-expect-error` lines make the check fail if a type ever degrades to `any`.
import {
  generateKey,
  sandboxCredential,
  SvcClient,
  SvcError,
  type CreateIntentParams,
  type Intent,
  type LedgerEvent,
  type LedgerVerification,
  type SettlementAnswer,
} from 'svc-settlement/sdk';

export async function releaseOne(gatewayBaseUrl: string, apiKey: string): Promise<{ settled: SettlementAnswer; ledger: LedgerVerification }> {
  const client = await SvcClient.open({ apiKey, gatewayBaseUrl, expectedEnvironment: 'sandbox' });
  const principal = { did: 'did:example:alice', key: generateKey().key };
  const payee = { did: 'did:example:search-vendor', key: generateKey().key };
  const params: CreateIntentParams = {
    principal,
    payee: { did: payee.did, publicKey: payee.key },
    amountCents: 250,
    deadline: new Date(Date.now() + 3_600_000),
    settlementRail: 'x402_usdc_base',
    allowedTools: ['search.web'],
    evidenceSchema: { type: 'object' },
    predicate: { version: 1, root: { op: 'completion', path: ['status'], value: 'completed' } },
  };
  const intent: Intent = await client.intents.create(params);
  const amountCents: number = intent.amount_cents;
  // @ts-expect-error amount_cents is a number, not a string.
  const amountText: string = intent.amount_cents;
  void amountCents, void amountText;

  await client.intents.fund(intent.intent_id, { credential: sandboxCredential() });
  await client.intents.submitEvidence(intent.intent_id, { payee, payload: { status: 'completed' } });
  const settled = await client.intents.confirm(intent.intent_id, { expectedAction: 'release' });
  const transactionId: string = settled.settlement!.transaction_id;

  const page = await client.ledger.events({ afterSeq: 0 });
  const rows: readonly LedgerEvent[] = page.events.filter((event) => event.transaction_id === transactionId);
  const sides: ('debit' | 'credit')[] = rows.map((event) => event.side);
  // @ts-expect-error ledger_seq is a number.
  const sequence: string | undefined = rows[0]?.ledger_seq;
  void sides, void sequence;
  return { settled, ledger: await client.ledger.verifyChain() };
}

export function describeFailure(error: unknown): string {
  return error instanceof SvcError ? `${error.name}: ${error.message}` : String(error);
}
