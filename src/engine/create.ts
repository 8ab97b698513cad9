// The `create` command (docs/engine.md#creating-an-intent--post-harborintents): the body read (the signing version
// gated before its shape), what its rule names loaded from the tenant's policies, the envelope decided
// (src/engine/decide/create.ts: tenant hints, deadline, evidence schema, rule, the principal's signature), and the
// intents row written.
import { CreateIntentBody } from '../contracts/intents.ts';
import { findPolicyHead, findPolicyVersion } from '../db/policy-repository.ts';
import { insertIntent, type Intent } from '../db/intent-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Principal } from '../credentials/principal.ts';
import { isUniqueViolation, type Queryable } from '../infra/database.ts';
import { compileBodyValidator } from '../infra/validation.ts';
import { assertFundableSigningVersion } from '../signing/signed-structs.ts';
import { assertPrincipalKeyAccepted, decideCreate, ruleLookupOf, type RuleFacts, type RuleLookup } from './decide.ts';
import { recordIntentTransition } from './intent-events.ts';

const assertCreateBody: (value: unknown) => asserts value is CreateIntentBody = compileBodyValidator<CreateIntentBody>(CreateIntentBody);

/** The policy rows a rule names, as the tenant has them; judged by decideCreate, not here. */
async function loadRule(tx: Queryable, tenantId: string, lookup: RuleLookup): Promise<RuleFacts> {
  switch (lookup.kind) {
    case 'none':
      return {};
    case 'version':
      return { referenced: await findPolicyVersion(tx, tenantId, lookup.templateId, { versionSeq: lookup.versionSeq }) };
    case 'head': {
      const head = await findPolicyHead(tx, tenantId, lookup.templateId);
      // Only the head may be bound: another version is refused whatever it holds, so it is not read.
      const version = head?.versionSeq === lookup.versionSeq ? await findPolicyVersion(tx, tenantId, lookup.templateId, { versionSeq: lookup.versionSeq }) : undefined;
      return { bound: { headSeq: head?.versionSeq ?? null, version } };
    }
  }
}

export async function createIntent(tx: Queryable, principal: Principal, rawBody: unknown, nowMs = Date.now()): Promise<Intent> {
  // Versions before shape, since another version may have another shape: a v4 body is "deprecated", not "missing
  // payee_pubkey".
  assertFundableSigningVersion((rawBody as { signing_version?: unknown } | null)?.signing_version);
  assertCreateBody(rawBody);
  const body = rawBody;
  const row = decideCreate(principal, body, await loadRule(tx, principal.tenantId, ruleLookupOf(body)), nowMs);
  let intent: Intent;
  try {
    intent = await insertIntent(tx, row);
  } catch (error) {
    if (isUniqueViolation(error, 'intents_pkey')) throw new ServiceError('intent.already_exists');
    throw error;
  }
  // The insert looked the key up in the registry; thrown here, the error rolls the insert back.
  assertPrincipalKeyAccepted(principal.environment, intent);
  recordIntentTransition(tx, intent);
  return intent;
}
