// Examples of the main flows' requests and answers for the OpenAPI document (docs/api.md "Examples"), referenced by
// the route contracts beside them. Captured from one real sandbox run (test/contracts/main-flow-capture.ts) and written by
// test/contracts/write-openapi-examples.ts: static values, not to be edited by hand. test/contracts/openapi-examples.test.ts
// validates each against its schema in the served document and checks it still has the shape of a live answer.
// Generated; keys, tokens and signatures are those of a throwaway test database.

/** GET /v1/auth/principal with the tenant's admin key. */
export const principalExample = {
  tenant_id: 'acme-research',
  tenant_uuid: '62bacb2e-0ed4-4201-92ad-0ad53061bd3e',
  environment: 'sandbox',
  service_account_role: 'admin',
  roles: ['admin'],
  key_kind: 'standard',
  mcp_scopes: [],
  subject: 'key_863e1328027599948364c022461f104f',
};

/** POST /v1/admin/api-keys: a standard key for an agent. */
export const apiKeyCreateBodyExample = { role: 'agent', name: 'research agent' };

/** Its 201 answer: the key itself appears here once. */
const apiKeyExample = {
  object: 'api_key',
  key_id: 'key_4263f953596f7d5a39576bed92b22d12',
  role: 'agent',
  name: 'research agent',
  key_kind: 'standard',
  scopes: [],
  environment: 'sandbox',
  service_account_role: 'agent',
  service_account_name: 'research agent',
  mcp_scopes: [],
  created_at: '2026-11-25T10:24:48.425Z',
  last_used_at: null,
  revoked_at: null,
};
export const apiKeyCreatedExample = {
  ...apiKeyExample,
  api_key: 'svc_sk_sandbox_4263f953596f7d5a39576bed92b22d12_228bea64b979ee66bf93eb8a207289b265e5dd1bfd2076b2e8a7dda54864bf9e',
  item: apiKeyExample,
};

/** POST /harbor/policy/v1/drafts: a version of a managed template. */
export const policyDraftBodyExample = { template_id: 'completion_budget_v1', parameters: { expected_status: 'completed' } };

/** Its 201 answer. */
export const policyVersionExample = {
  object: 'policy_version',
  template_id: 'completion_budget_v1',
  version_seq: 1,
  parameters: { status_path: ['status'], expected_status: 'completed', cost_path: ['cost_cents'] },
  materialized_predicate: {
    version: 1,
    root: {
      op: 'and',
      clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }],
    },
  },
  human_summary: 'Releases when evidence status equals "completed" and evidence cost_cents is an integer no greater than the intent amount_cents.',
  content_digest: 'f87e410da9b1dc64a8685e1a20ffd1c13340150c76d1f8e59ee8ad9a0161dfbb',
  created_at: '2026-11-25T10:24:48.569Z',
  is_head: false,
};

/** POST /harbor/intents: a principal-signed v6 envelope for an x402 intent of 5.00 USD. */
export const createIntentBodyExample = {
  intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
  principal_did: 'did:web:buyer.example',
  principal_pubkey: 'wmdSsZq4cAc15eY8JseB4un2ooe8af/VCylBiM5LAkU=',
  principal_signature: 'Vz9G4X6C9/9Gt6alNK3pUI0xdlMyp/o7Kryj7Q/U/BNf2YNkXkQL3cGKX3Z7FDzH1UJ2aP5R9xTw/aOEc5m0AQ==',
  payee_did: 'did:web:tools.example',
  payee_pubkey: 'IGI1tITS3KqvaeGo+tROplR6CAoiFD+HRFvkc1eBoPw=',
  budget: { max: 500 },
  currency: 'usd',
  amount_cents: 500,
  evidence_schema: { type: 'object', properties: { status: { type: 'string' }, cost_cents: { type: 'integer' } }, required: ['status'] },
  deadline: '2026-11-25T11:24:48Z',
  predicate_dsl: {
    version: 1,
    root: {
      op: 'and',
      clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }],
    },
  },
  settlement_rail: 'x402_usdc_base',
  signing_version: 6,
  policy_binding: null,
  allowed_tools: ['search.web'],
};

/** Its 201 answer, the intent as GET /harbor/intents/{intent_id} reads it until it is funded. */
export const intentExample = {
  object: 'intent',
  tenant: 'acme-research',
  tenant_id: 'acme-research',
  intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
  state: 'open',
  funded: false,
  signing_version: 6,
  principal_did: 'did:web:buyer.example',
  principal_key_registered: false,
  payee_did: 'did:web:tools.example',
  amount_cents: 500,
  currency: 'usd',
  budget: { max: 500 },
  evidence_schema: { type: 'object', required: ['status'], properties: { status: { type: 'string' }, cost_cents: { type: 'integer' } } },
  deadline: '2026-11-25T11:24:48Z',
  predicate_dsl: {
    root: {
      op: 'and',
      clauses: [{ op: 'completion', path: ['status'], value: 'completed' }, { op: 'budget_cap', path: ['cost_cents'] }],
    },
    version: 1,
  },
  predicate_ref: '',
  policy_binding: null,
  settlement_rail: 'x402_usdc_base',
  allowed_tools: ['search.web'],
  completion_preset_id: null,
  predicate_passed: null,
  created_at: '2026-11-25T10:24:48.860Z',
  funded_at: null,
  evidence_recorded_at: null,
  settled_at: null,
  release_mode: 'full',
  released_cents: null,
  refunded_cents: null,
};

/** POST /harbor/intents/{intent_id}/fund without a credential: the 402 challenge. */
export const fundChallengeExample = {
  tenant: 'acme-research',
  tenant_id: 'acme-research',
  intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
  state: 'open',
  settlement_rail: 'x402_usdc_base',
  currency: 'usd',
  amount_cents: 500,
  funded: false,
  funding: {
    settlement_rail: 'x402_usdc_base',
    status: 'created',
    challenge_id: 'a651a1232cfd75b9277bcb24dd6453bf9a26afacee68755eff45cb8df4aa5e28',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    network: 'eip155:84532',
    target_address: '0x5a4d000000000000000000000000000000005a4d',
  },
};

/** The challenge's PAYMENT-REQUIRED header (x402): base64 JSON of the payment requirements. */
export const paymentRequiredHeaderExample = 'eyJ4NDAyVmVyc2lvbiI6MiwiZXJyb3IiOiJQQVlNRU5ULVNJR05BVFVSRSBoZWFkZXIgaXMgcmVxdWlyZWQiLCJyZXNvdXJjZSI6eyJ1cmwiOiJodHRwOi8vc2V0dGxlbWVudC5leGFtcGxlLmNvbS9oYXJib3IvaW50ZW50cy8yMDYyMWM5ZS1hOTNiLTRiMzAtOTg1Mi0zMTZmN2Q5YmU2MTAvZnVuZCIsImRlc2NyaXB0aW9uIjoiRnVuZCBpbnRlbnQgMjA2MjFjOWUtYTkzYi00YjMwLTk4NTItMzE2ZjdkOWJlNjEwIiwibWltZVR5cGUiOiJhcHBsaWNhdGlvbi9qc29uIn0sImFjY2VwdHMiOlt7InNjaGVtZSI6ImV4YWN0IiwibmV0d29yayI6ImVpcDE1NTo4NDUzMiIsImFtb3VudCI6IjUwMDAwMDAiLCJhc3NldCI6IjB4MDM2Q2JENTM4NDJjNTQyNjYzNGU3OTI5NTQxZUMyMzE4ZjNkQ0Y3ZSIsInBheVRvIjoiMHg1YTRkMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA1YTRkIiwibWF4VGltZW91dFNlY29uZHMiOjMwMCwiZXh0cmEiOnsibmFtZSI6IlVTREMiLCJ2ZXJzaW9uIjoiMiIsImNoYWxsZW5nZV9ub25jZSI6IjZkMjU2YWI0YjE4Yjc4ZDk1NTE1NjUzZjNkODc0YWQ5In19XX0=';

/** The same request with a payment-signature: 200, funded, with the capability token. */
export const fundFundedExample = {
  tenant: 'acme-research',
  tenant_id: 'acme-research',
  intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
  state: 'funded',
  settlement_rail: 'x402_usdc_base',
  currency: 'usd',
  amount_cents: 500,
  funded: true,
  funding: {
    settlement_rail: 'x402_usdc_base',
    status: 'authorization_succeeded',
    challenge_id: 'a651a1232cfd75b9277bcb24dd6453bf9a26afacee68755eff45cb8df4aa5e28',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    network: 'eip155:84532',
    source_address: '0x0000000000000000000000000000000000000001',
    payment_reference: '0x30d86de648e1ce47bf91f9b38b4c32bc5c0998d157ebd53574e13854943e5578',
    accepted_cumulative_base_units: '5000000',
  },
  capability_token: 'eyJhbGciOiJFZERTQSIsImtpZCI6ImdrXzIwMjYtMTEtMjVfYjBkZTgxNDUiLCJ0eXAiOiJKV1QifQ.eyJpbnRlbnRfaWQiOiIyMDYyMWM5ZS1hOTNiLTRiMzAtOTg1Mi0zMTZmN2Q5YmU2MTAiLCJhbGxvd2VkX3Rvb2xzIjpbInNlYXJjaC53ZWIiXSwiYW1vdW50X2NlbnRzIjo1MDAsImN1cnJlbmN5IjoidXNkIiwidGlkIjoiYWNtZS1yZXNlYXJjaCIsImlzcyI6InN2Yy1nYXRld2F5Iiwic3ViIjoiMjA2MjFjOWUtYTkzYi00YjMwLTk4NTItMzE2ZjdkOWJlNjEwIiwiYXVkIjoic3ZjLWNhcGFiaWxpdHkiLCJpYXQiOjE3OTU2MDIyODksIm5iZiI6MTc5NTYwMjI4OSwiZXhwIjoxNzk1NjA1ODg3LCJqdGkiOiIyZjM5MzU3MC03YWQxLTRmODYtYmRjMC02ZTNmYTQxODI4YTQifQ.agMMAkMxbi0gm3ks4OTmhc8edDqdrqOZ-QLGeLOP0h_E4GzgCj6vsaao0UOCCgjfWRdTWeiAYEDxGAxJwImDDw',
};

/** Its PAYMENT-RESPONSE header (x402): base64 JSON of the settlement response. */
export const paymentResponseHeaderExample = 'eyJzdWNjZXNzIjp0cnVlLCJ0cmFuc2FjdGlvbiI6IjB4MzBkODZkZTY0OGUxY2U0N2JmOTFmOWIzOGI0YzMyYmM1YzA5OThkMTU3ZWJkNTM1NzRlMTM4NTQ5NDNlNTU3OCIsIm5ldHdvcmsiOiJlaXAxNTU6ODQ1MzIiLCJwYXllciI6IjB4MDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMSIsImFtb3VudCI6IjUwMDAwMDAifQ==';

/** The WWW-Authenticate header of an MPP intent's 402 challenge. */
export const wwwAuthenticateHeaderExample = 'Payment id="bflFCjTwzTDTQStHSykrGw", realm="http://settlement.example.com/harbor/intents/d0d7c26b-a9d3-4906-a2a9-07c651a668f6/fund", method="stripe", intent="charge", request="eyJhbW91bnQiOiI1MDAiLCJjdXJyZW5jeSI6InVzZCJ9", expires="2026-11-25T10:39:50Z"';

/** The Payment-Receipt header of an MPP intent funded. */
export const paymentReceiptHeaderExample = 'eyJzdGF0dXMiOiJzdWNjZXNzIiwibWV0aG9kIjoic3RyaXBlIiwidGltZXN0YW1wIjoiMjAyNi0xMS0yNVQxMDoyNDo1MFoiLCJyZWZlcmVuY2UiOiJwaV9zYW5kYm94XzJiNzZjN2Y1MWQyOTcyMzgwZWVmYTI5YSJ9';

/** POST /harbor/intents/{intent_id}/evidence: the payee-signed evidence. */
export const evidenceBodyExample = {
  payload: { status: 'completed', cost_cents: 420 },
  artifacts: [],
  payee_did: 'did:web:tools.example',
  payee_pubkey: 'IGI1tITS3KqvaeGo+tROplR6CAoiFD+HRFvkc1eBoPw=',
  payee_signature: 'RCnVgzeoxt/rlQznEPgaE0+hO65ZwPUWcaxrN5dwDNNHPGap8q1QWjGIw/11cFnnUpRJu1hE6QvZvHwFosJrDQ==',
  submitted_at: '2026-11-25T10:24:49Z',
};

/** Its 200 answer: the release rule passed, with its trace. */
export const evidenceAnswerExample = {
  tenant: 'acme-research',
  tenant_id: 'acme-research',
  intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
  state: 'evidence_recorded',
  intent_state: 'evidence_recorded',
  predicate_passed: true,
  predicate_evaluation: {
    passed: true,
    trace: [
      { kind: 'and', detail: 'all 2 clauses passed', data: { passed: true } },
      {
        kind: 'completion',
        detail: 'status equals "completed"',
        data: { path: '/status', passed: true, expected: 'completed', observed: 'completed' },
      },
      {
        kind: 'budget_cap',
        detail: 'cost_cents is at most amount_cents',
        data: { path: '/cost_cents', passed: true, expected: 500, observed: 420 },
      },
    ],
  },
  payload_digest: '1e63ae50dafa7e3ee5aefa784158d53b97b71b6e8110d06d77261276403516fa',
  artifacts_digest: 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
};

/** POST /harbor/intents/{intent_id}/settlement/confirm, guarded by the action the caller expects. */
export const confirmBodyExample = { expected_action: 'release' };

/** Its 200 answer: the intent released. */
export const settlementAnswerExample = {
  ...intentExample,
  state: 'released',
  funded: true,
  predicate_passed: true,
  funded_at: '2026-11-25T10:24:49.583Z',
  evidence_recorded_at: '2026-11-25T10:24:49.719Z',
  settled_at: '2026-11-25T10:24:49.799Z',
  released_cents: 500,
  refunded_cents: 0,
  settlement: { action: 'release', reason: 'predicate_passed', transaction_id: '03b98aaf-2427-44b8-88d1-83e6873ca178', released_cents: 500, refunded_cents: 0 },
};

/** GET /harbor/ledger/v1/events after that lifecycle: the tenant's rows, chained. */
export const ledgerEventsExample = {
  tenant: 'acme-research',
  tenant_id: 'acme-research',
  events: [
    {
      ledger_seq: 1,
      transaction_id: '3597bd4e-ec1f-4b33-9927-aec65c199402',
      intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
      entry_index: 0,
      account: 'intent:20621c9e-a93b-4b30-9852-316f7d9be610:escrow',
      side: 'debit',
      amount_cents: 500,
      currency: 'usd',
      event_kind: 'fund',
      recorded_at: '2026-11-25T10:24:49.572Z',
      body_hex: '020d61636d652d726573656172636801103597bd4eec1f4b339927aec65c1994021020621c9ea93b4b309852316f7d9be6100032696e74656e743a32303632316339652d613933622d346233302d393835322d3331366637643962653631303a657363726f7700fbe803037573640466756e6418323032362d31312d32355431303a32343a34392e3537325a',
      prev_row_hash_hex: '0000000000000000000000000000000000000000000000000000000000000000',
      row_hash_hex: 'f07b8ec67b406b53b03fd1cad7adda0273dc2de2636e8504e3da547f57a32af0',
    },
    {
      ledger_seq: 2,
      transaction_id: '3597bd4e-ec1f-4b33-9927-aec65c199402',
      intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
      entry_index: 1,
      account: 'rail:x402_usdc_base:funding',
      side: 'credit',
      amount_cents: 500,
      currency: 'usd',
      event_kind: 'fund',
      recorded_at: '2026-11-25T10:24:49.572Z',
      body_hex: '020d61636d652d726573656172636802103597bd4eec1f4b339927aec65c1994021020621c9ea93b4b309852316f7d9be610011b7261696c3a783430325f757364635f626173653a66756e64696e6701fbe803037573640466756e6418323032362d31312d32355431303a32343a34392e3537325a',
      prev_row_hash_hex: 'f07b8ec67b406b53b03fd1cad7adda0273dc2de2636e8504e3da547f57a32af0',
      row_hash_hex: 'a3357162daf7080a5a39f5060d134f3469c83ec0c085c42214976ff50d997ef2',
    },
    {
      ledger_seq: 3,
      transaction_id: '03b98aaf-2427-44b8-88d1-83e6873ca178',
      intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
      entry_index: 0,
      account: 'payee:did:web:tools.example:payable',
      side: 'debit',
      amount_cents: 500,
      currency: 'usd',
      event_kind: 'release',
      recorded_at: '2026-11-25T10:24:49.805Z',
      body_hex: '020d61636d652d7265736561726368031003b98aaf242744b888d183e6873ca1781020621c9ea93b4b309852316f7d9be610002370617965653a6469643a7765623a746f6f6c732e6578616d706c653a70617961626c6500fbe803037573640772656c6561736518323032362d31312d32355431303a32343a34392e3830355a',
      prev_row_hash_hex: 'a3357162daf7080a5a39f5060d134f3469c83ec0c085c42214976ff50d997ef2',
      row_hash_hex: '545eae5b789eb5e6e52669b47ed22b399411241ea36db5468c55728ad4d57524',
    },
    {
      ledger_seq: 4,
      transaction_id: '03b98aaf-2427-44b8-88d1-83e6873ca178',
      intent_id: '20621c9e-a93b-4b30-9852-316f7d9be610',
      entry_index: 1,
      account: 'intent:20621c9e-a93b-4b30-9852-316f7d9be610:escrow',
      side: 'credit',
      amount_cents: 500,
      currency: 'usd',
      event_kind: 'release',
      recorded_at: '2026-11-25T10:24:49.805Z',
      body_hex: '020d61636d652d7265736561726368041003b98aaf242744b888d183e6873ca1781020621c9ea93b4b309852316f7d9be6100132696e74656e743a32303632316339652d613933622d346233302d393835322d3331366637643962653631303a657363726f7701fbe803037573640772656c6561736518323032362d31312d32355431303a32343a34392e3830355a',
      prev_row_hash_hex: '545eae5b789eb5e6e52669b47ed22b399411241ea36db5468c55728ad4d57524',
      row_hash_hex: 'd9a2eb520866bc6ff2794255251c18d25782ceabd1078f0ef09ebe93eba03035',
    },
  ],
  next_after_seq: null,
};

/** A refusal: funding the released intent again (409). */
export const invalidStateExample = {
  error: {
    code: 'intent.invalid_state',
    message: 'The intent is not in a state that allows this operation.',
    details: { state: 'released', allowed_states: ['open'] },
  },
  request_id: 'req_89cdc922c562824e0970e7b4',
};

/** POST /v1/sandbox/guardrails/bootstrap. */
export const sandboxBootstrapBodyExample = { operation: 'search.web', requested_spend_cents: 25 };

/** Its 200 answer: a funded sandbox intent with its capability token. */
export const sandboxBootstrappedExample = {
  tenant: 'acme-research',
  tenant_id: 'acme-research',
  intent_id: '9a97db81-125f-4d5c-8119-6786b1985339',
  capability_token: 'eyJhbGciOiJFZERTQSIsImtpZCI6ImdrXzIwMjYtMTEtMjVfYjBkZTgxNDUiLCJ0eXAiOiJKV1QifQ.eyJpbnRlbnRfaWQiOiI5YTk3ZGI4MS0xMjVmLTRkNWMtODExOS02Nzg2YjE5ODUzMzkiLCJhbGxvd2VkX3Rvb2xzIjpbInNlYXJjaC53ZWIiXSwiYW1vdW50X2NlbnRzIjoyNSwiY3VycmVuY3kiOiJ1c2QiLCJ0aWQiOiJhY21lLXJlc2VhcmNoIiwiaXNzIjoic3ZjLWdhdGV3YXkiLCJzdWIiOiI5YTk3ZGI4MS0xMjVmLTRkNWMtODExOS02Nzg2YjE5ODUzMzkiLCJhdWQiOiJzdmMtY2FwYWJpbGl0eSIsImlhdCI6MTc5NTYwMjI5MSwibmJmIjoxNzk1NjAyMjkxLCJleHAiOjE3OTU2MDU4OTAsImp0aSI6ImRhN2U1OTk2LTNjOTYtNGM3NS04ODA1LTlmMmMwZmYyZDU2NiJ9.WJuftnh9LRSnEq1dIXh7v6XpJRgKc9hSDAwwUcC4X-AXgw_kV-t4mMqbTJBi3lTiYmGs68oZPh9Glc1aEmQrBQ',
  operation: 'search.web',
  sandbox_lifecycle_status: 'funded',
  requested_spend_cents: 25,
  amount_cents: 25,
  currency: 'usd',
  settlement_rail: 'x402_usdc_base',
  settlement_mode: 'simulated',
  simulator_event: {
    type: 'funding.simulated',
    reference: 'sim_376f7743-ba5c-489c-a6ff-51eaba865a27',
    amount_cents: 25,
    currency: 'usd',
  },
  allowed_tools: ['search.web'],
  completion_source: 'default',
  completion_preset: null,
  template_id: 'completion_v1',
  parameters: { status_path: ['status'], expected_status: 'completed' },
  evidence_schema: { type: 'object' },
  predicate_dsl: { root: { op: 'completion', path: ['status'], value: 'completed' }, version: 1 },
  deadline: '2026-11-25T11:24:51Z',
};
