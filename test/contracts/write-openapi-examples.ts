// Writes src/contracts/examples.ts from one real run of the main flows (main-flow-capture.ts) on a fresh database:
// `node --import tsx test/contracts/write-openapi-examples.ts`. Run it when an answer of a main flow changes shape, which
// test/contracts/openapi-examples.test.ts reports; the module it writes is static source, reviewed as any other.
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { projectRoot } from '../helpers/server-process.ts';
import { captureMainFlow, capturedExampleNames, type CapturedExamples } from './main-flow-capture.ts';

/** What each example shows, written above it in the module. */
const captions: Record<keyof CapturedExamples, string> = {
  principalExample: 'GET /v1/auth/principal with the tenant\'s admin key.',
  apiKeyCreateBodyExample: 'POST /v1/admin/api-keys: a standard key for an agent.',
  apiKeyCreatedExample: 'Its 201 answer: the key itself appears here once.',
  policyDraftBodyExample: 'POST /harbor/policy/v1/drafts: a version of a managed template.',
  policyVersionExample: 'Its 201 answer.',
  createIntentBodyExample: 'POST /harbor/intents: a principal-signed v6 envelope for an x402 intent of 5.00 USD.',
  intentExample: 'Its 201 answer, the intent as GET /harbor/intents/{intent_id} reads it until it is funded.',
  fundChallengeExample: 'POST /harbor/intents/{intent_id}/fund without a credential: the 402 challenge.',
  paymentRequiredHeaderExample: 'The challenge\'s PAYMENT-REQUIRED header (x402): base64 JSON of the payment requirements.',
  fundFundedExample: 'The same request with a payment-signature: 200, funded, with the capability token.',
  paymentResponseHeaderExample: 'Its PAYMENT-RESPONSE header (x402): base64 JSON of the settlement response.',
  wwwAuthenticateHeaderExample: 'The WWW-Authenticate header of an MPP intent\'s 402 challenge.',
  paymentReceiptHeaderExample: 'The Payment-Receipt header of an MPP intent funded.',
  evidenceBodyExample: 'POST /harbor/intents/{intent_id}/evidence: the payee-signed evidence.',
  evidenceAnswerExample: 'Its 200 answer: the release rule passed, with its trace.',
  confirmBodyExample: 'POST /harbor/intents/{intent_id}/settlement/confirm, guarded by the action the caller expects.',
  settlementAnswerExample: 'Its 200 answer: the intent released.',
  ledgerEventsExample: 'GET /harbor/ledger/v1/events after that lifecycle: the tenant\'s rows, chained.',
  invalidStateExample: 'A refusal: funding the released intent again (409).',
  sandboxBootstrapBodyExample: 'POST /v1/sandbox/guardrails/bootstrap.',
  sandboxBootstrappedExample: 'Its 200 answer: a funded sandbox intent with its capability token.',
};

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const lineWidth = 120;

/** A JSON value as a TypeScript literal in the repository's style: single quotes, bare keys where they can be. */
function literal(value: unknown, indent: string): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  const inner = `${indent}  `;
  const parts = Array.isArray(value)
    ? value.map((element) => literal(element, inner))
    : Object.entries(value as Record<string, unknown>).map(([key, member]) => `${identifier.test(key) ? key : literal(key, inner)}: ${literal(member, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (parts.length === 0) return `${open}${close}`;
  const flat = Array.isArray(value) ? `[${parts.join(', ')}]` : `{ ${parts.join(', ')} }`;
  if (!flat.includes('\n') && indent.length + flat.length <= lineWidth) return flat;
  return `${open}\n${parts.map((part) => `${inner}${part},`).join('\n')}\n${indent}${close}`;
}

/** An earlier example an object example can be written as a spread of: every one of the earlier example's fields is
 * here too, and most of them with the same value (a later state of the same intent, say). */
function spreadBase(value: unknown, earlier: ReadonlyArray<readonly [string, unknown]>): readonly [string, Record<string, unknown>] | undefined {
  if (!isPlainObject(value)) return undefined;
  let best: readonly [string, Record<string, unknown>, number] | undefined;
  for (const [name, candidate] of earlier) {
    if (!isPlainObject(candidate) || !Object.keys(candidate).every((key) => Object.hasOwn(value, key))) continue;
    const same = Object.keys(candidate).filter((key) => isDeepStrictEqual(candidate[key], value[key])).length;
    if (same >= spreadSharedFieldsMin && same * 2 >= Object.keys(value).length && same > (best?.[2] ?? 0)) best = [name, candidate, same];
  }
  return best && [best[0], best[1]];
}

const spreadSharedFieldsMin = 8;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An example's literal: a spread of an earlier example and the fields that differ, when one shares most of it. */
function exampleLiteral(value: unknown, earlier: ReadonlyArray<readonly [string, unknown]>): string {
  const base = spreadBase(value, earlier);
  if (!base) return literal(value, '');
  const [baseName, baseValue] = base;
  const record = value as Record<string, unknown>;
  const changed = Object.keys(record).filter((key) => !isDeepStrictEqual(baseValue[key], record[key]));
  const fields = changed.map((key) => `  ${identifier.test(key) ? key : literal(key, '  ')}: ${literal(record[key], '  ')},`);
  return `{\n  ...${baseName},\n${fields.join('\n')}\n}`;
}

export function examplesModule(captured: CapturedExamples): string {
  const header = [
    '// Examples of the main flows\' requests and answers for the OpenAPI document (docs/api.md "Examples"), referenced by',
    '// the route contracts beside them. Captured from one real sandbox run (test/contracts/main-flow-capture.ts) and written by',
    '// test/contracts/write-openapi-examples.ts: static values, not to be edited by hand. test/contracts/openapi-examples.test.ts',
    '// validates each against its schema in the served document and checks it still has the shape of a live answer.',
    '// Generated; keys, tokens and signatures are those of a throwaway test database.',
  ];
  const earlier: Array<readonly [string, unknown]> = [];
  const body = capturedExampleNames.map((name) => {
    const text = `/** ${captions[name]} */\nexport const ${name} = ${exampleLiteral(captured[name], earlier)};\n`;
    earlier.push([name, captured[name]]);
    return text;
  });
  return `${header.join('\n')}\n\n${body.join('\n')}`;
}

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const app = await buildTestApp(database.connection);
  try {
    const captured = await captureMainFlow(app, database.connection);
    const target = path.join(projectRoot, 'src/contracts/examples.ts');
    fs.writeFileSync(target, examplesModule(captured));
    process.stdout.write(`wrote ${path.relative(projectRoot, target)}\n`);
  } finally {
    await app.close();
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
