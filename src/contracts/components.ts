// The schemas the OpenAPI document names (`components.schemas`, docs/api.md#components): every object schema a
// contract module exports, under its export name, and the error envelope of each status (`ErrorEnvelope404`). The
// document states each once and every operation refers to it, so that a client generated from it has one type per
// concept instead of one per place it appears. Naming is a rule, not a list: a new contract is named by exporting it.
import type { TSchema } from 'typebox';
import { errorCatalogue } from '../errors/catalogue.ts';
import * as apiKeys from './api-keys.ts';
import * as auditExports from './audit-exports.ts';
import { AnyErrorEnvelope, ErrorEnvelope } from './common.ts';
import * as deviceLogin from './device-login.ts';
import * as fundingAttempts from './funding-attempts.ts';
import * as intents from './intents.ts';
import * as ledger from './ledger.ts';
import * as policies from './policies.ts';
import * as policyRollback from './policy-rollback.ts';
import * as principal from './principal.ts';
import * as protocol from './protocol.ts';
import * as recognition from './recognition.ts';
import * as registry from './registry.ts';
import * as sandbox from './sandbox.ts';
import * as settlementConfig from './settlement-config.ts';
import * as signIn from './sign-in.ts';
import * as spendDecisions from './spend-decisions.ts';
import * as sso from './sso.ts';
import * as standing from './standing.ts';
import * as wellKnown from './well-known.ts';

const contractModules: readonly Record<string, unknown>[] = [
  apiKeys, auditExports, deviceLogin, fundingAttempts, intents, ledger, policies, policyRollback, principal, protocol,
  recognition, registry, sandbox, settlementConfig, signIn, spendDecisions, sso, standing, wellKnown,
];

/** An object schema (or a choice of them): what a generated client makes a type of. Scalars (ids, timestamps) stay
 * inline, where their constraints read best. */
function isObjectSchema(value: unknown): value is TSchema & Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const schema = value as Record<string, unknown>;
  if (schema['type'] === 'object') return true;
  const choices = schema['anyOf'] ?? schema['oneOf'];
  return Array.isArray(choices) && choices.some(isObjectSchema);
}

function collect(): ReadonlyMap<string, Record<string, unknown>> {
  const named = new Map<string, Record<string, unknown>>();
  const add = (name: string, schema: object) => {
    if (named.has(name)) throw new Error(`two contract schemas are exported as ${name}: component names must be unique`);
    named.set(name, schema as Record<string, unknown>);
  };
  for (const module of contractModules) {
    for (const [name, value] of Object.entries(module)) if (isObjectSchema(value)) add(name, value);
  }
  for (const status of new Set(Object.values(errorCatalogue).map((entry) => entry.status))) add(`ErrorEnvelope${status}`, ErrorEnvelope(status));
  add('ErrorEnvelope', AnyErrorEnvelope);
  return named;
}

/** The named schemas, each stamped with its name as its `title`: the mark by which the document's builder knows it
 * among the copies @fastify/swagger makes (src/surfaces/reference.ts). An object exported under two names is named
 * once, by the first. */
export const componentSchemas: ReadonlyMap<string, Record<string, unknown>> = (() => {
  const named = new Map<string, Record<string, unknown>>();
  for (const [name, schema] of collect()) {
    if (schema['title'] === undefined) schema['title'] = name;
    const title = schema['title'] as string;
    if (!named.has(title)) named.set(title, schema);
  }
  return named;
})();
