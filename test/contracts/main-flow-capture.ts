// Runs the main flows once against the real app, as a client would, and keeps every request and answer the OpenAPI
// examples show (src/contracts/examples.ts): the principal read, an API key, a policy draft, an x402 intent from
// creation to release with its ledger, an MPP challenge and receipt, a refusal, and a sandbox bootstrap.
// write-openapi-examples.ts writes the examples module from it; openapi-examples.test.ts runs it again and checks
// that the static examples still have the shape of what the server answers.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { sandboxMppAuthorization, sandboxMppTokens } from '../../src/rails/mpp/wire.ts';
import { sandboxX402Payers, sandboxX402PaymentSignature } from '../../src/rails/x402/wire.ts';
import { bearer, createTestTenant } from '../helpers/app.ts';
import { party, signedCreateBody, signedEvidenceBody } from '../helpers/intents.ts';

/** The name of each captured value, in the order the examples module lists them. */
export const capturedExampleNames = [
  'principalExample',
  'apiKeyCreateBodyExample',
  'apiKeyCreatedExample',
  'policyDraftBodyExample',
  'policyVersionExample',
  'createIntentBodyExample',
  'intentExample',
  'fundChallengeExample',
  'paymentRequiredHeaderExample',
  'fundFundedExample',
  'paymentResponseHeaderExample',
  'wwwAuthenticateHeaderExample',
  'paymentReceiptHeaderExample',
  'evidenceBodyExample',
  'evidenceAnswerExample',
  'confirmBodyExample',
  'settlementAnswerExample',
  'ledgerEventsExample',
  'invalidStateExample',
  'sandboxBootstrapBodyExample',
  'sandboxBootstrappedExample',
] as const;
export type CapturedExamples = Record<(typeof capturedExampleNames)[number], unknown>;

/** The host the requests name, so that the resource URLs inside challenges read like a deployment's. */
const host = 'settlement.example.com';

export async function captureMainFlow(app: FastifyInstance, connection: pg.PoolConfig): Promise<CapturedExamples> {
  const tenant = await createTestTenant(connection, 'sandbox', 'acme-research');
  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const response = await app.inject({ method, url, headers: { host, ...bearer(tenant.adminKey), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
    return { status: response.statusCode, body: response.json() as Record<string, unknown>, headers: response.headers };
  };
  const expectStatus = <Answer extends { status: number; body: unknown }>(answer: Answer, status: number, what: string): Answer => {
    if (answer.status !== status) throw new Error(`${what} answered ${answer.status}, not ${status}: ${JSON.stringify(answer.body)}`);
    return answer;
  };
  const header = (answer: { headers: Record<string, unknown> }, name: string): string => {
    const value = answer.headers[name];
    if (typeof value !== 'string') throw new Error(`no ${name} header`);
    return value;
  };

  const principal = expectStatus(await call('GET', '/v1/auth/principal'), 200, 'the principal read');
  const apiKeyCreateBody = { role: 'agent', name: 'research agent' };
  const apiKeyCreated = expectStatus(await call('POST', '/v1/admin/api-keys', apiKeyCreateBody), 201, 'the key creation');
  const policyDraftBody = { template_id: 'completion_budget_v1', parameters: { expected_status: 'completed' } };
  const policyVersion = expectStatus(await call('POST', '/harbor/policy/v1/drafts', policyDraftBody), 201, 'the policy draft');

  // An x402 intent, from creation to release.
  const principalParty = party('did:web:buyer.example');
  const payee = party('did:web:tools.example');
  const createBody = signedCreateBody({
    tenantId: tenant.tenantId,
    principal: principalParty,
    payee,
    amountCents: 500,
    allowedTools: ['search.web'],
    predicate: { version: 1, root: { op: 'and', clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }] } },
  });
  const intentId = createBody['intent_id'] as string;
  const created = expectStatus(await call('POST', '/harbor/intents', createBody), 201, 'the intent creation');
  const fundUrl = `/harbor/intents/${intentId}/fund`;
  const challenge = expectStatus(await call('POST', fundUrl, {}), 402, 'the x402 challenge');
  const paymentRequired = header(challenge, 'payment-required');
  const paymentSignature = sandboxX402PaymentSignature(paymentRequired, { from: sandboxX402Payers.success });
  const funded = expectStatus(await call('POST', fundUrl, {}, { 'payment-signature': paymentSignature }), 200, 'the x402 funding');
  const evidenceBody = signedEvidenceBody({ tenantId: tenant.tenantId, intentId, payee, payload: { status: 'completed', cost_cents: 420 } });
  const evidence = expectStatus(await call('POST', `/harbor/intents/${intentId}/evidence`, evidenceBody), 200, 'the evidence');
  const confirmBody = { expected_action: 'release' };
  const settled = expectStatus(await call('POST', `/harbor/intents/${intentId}/settlement/confirm`, confirmBody), 200, 'the confirmation');
  const ledgerEvents = expectStatus(await call('GET', '/harbor/ledger/v1/events'), 200, 'the ledger read');
  // Funding a released intent again: the state machine refuses it.
  const invalidState = expectStatus(await call('POST', fundUrl, {}), 409, 'funding a released intent');

  // An MPP intent: its challenge and its receipt travel in the MPP headers.
  const mppBody = signedCreateBody({ tenantId: tenant.tenantId, principal: principalParty, payee, amountCents: 500, settlementRail: 'processor_mpp', allowedTools: ['search.web'] });
  expectStatus(await call('POST', '/harbor/intents', mppBody), 201, 'the MPP intent creation');
  const mppFundUrl = `/harbor/intents/${mppBody['intent_id'] as string}/fund`;
  const mppChallenge = expectStatus(await call('POST', mppFundUrl, {}), 402, 'the MPP challenge');
  const wwwAuthenticate = header(mppChallenge, 'www-authenticate');
  const mppAuthorization = sandboxMppAuthorization(wwwAuthenticate, sandboxMppTokens.success);
  const mppFunded = expectStatus(await call('POST', mppFundUrl, {}, { 'x-svc-payment-authorization': mppAuthorization }), 200, 'the MPP funding');

  const sandboxBootstrapBody = { operation: 'search.web', requested_spend_cents: 25 };
  const bootstrapped = expectStatus(await call('POST', '/v1/sandbox/guardrails/bootstrap', sandboxBootstrapBody), 200, 'the sandbox bootstrap');

  return {
    principalExample: principal.body,
    apiKeyCreateBodyExample: apiKeyCreateBody,
    apiKeyCreatedExample: apiKeyCreated.body,
    policyDraftBodyExample: policyDraftBody,
    policyVersionExample: policyVersion.body,
    createIntentBodyExample: createBody,
    intentExample: created.body,
    fundChallengeExample: challenge.body,
    paymentRequiredHeaderExample: paymentRequired,
    fundFundedExample: funded.body,
    paymentResponseHeaderExample: header(funded, 'payment-response'),
    wwwAuthenticateHeaderExample: wwwAuthenticate,
    paymentReceiptHeaderExample: header(mppFunded, 'payment-receipt'),
    evidenceBodyExample: evidenceBody,
    evidenceAnswerExample: evidence.body,
    confirmBodyExample: confirmBody,
    settlementAnswerExample: settled.body,
    ledgerEventsExample: ledgerEvents.body,
    invalidStateExample: invalidState.body,
    sandboxBootstrapBodyExample: sandboxBootstrapBody,
    sandboxBootstrappedExample: bootstrapped.body,
  };
}
