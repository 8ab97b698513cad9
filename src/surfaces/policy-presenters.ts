// How policy versions and head moves appear on the wire, shared by the engine's policy routes and the gateway's
// rollback route; and the declared order that policy parameters and rules are shown in wherever they appear.
import type { PolicyVersion as PolicyVersionView } from '../contracts/policies.ts';
import type { PolicyHeadMove } from '../contracts/policy-rollback.ts';
import type { PolicyVersion } from '../db/policy-repository.ts';
import { compilePredicate, findTemplate } from '../predicate/index.ts';
import type { HeadMove } from '../services/policy-service.ts';

// Postgres jsonb keeps an object's keys in its own order (shorter keys first), not in the order they were written.
// Clients compare what they read with the template catalogue as JSON text (the public client's `doctor` does), so
// every answer rebuilds the order declared by the template and the rule language before it goes out.

/** Parameters in the order the template declares them (the catalogue's order); keys the template does not declare,
 * which a stored version never has, would follow in stored order. An unknown template leaves them as stored. */
export function orderedParameters(templateId: string, parameters: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const declared = findTemplate(templateId)?.parameters.map(({ name }) => name) ?? [];
  const names = [...declared.filter((name) => Object.hasOwn(parameters, name)), ...Object.keys(parameters).filter((name) => !declared.includes(name))];
  return Object.fromEntries(names.map((name) => [name, parameters[name]]));
}

/** A rule this service materialized from a template, with its fields in the language's order (`version`, then
 * `root`; each clause's `op` first), as a preview shows it. Only for rules the service built: a caller's own
 * predicate_dsl is shown as stored. */
export function orderedMaterializedPredicate(predicate: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return compilePredicate(predicate).document;
}

export function presentVersion(version: PolicyVersion, headSeq: number | undefined): PolicyVersionView {
  return {
    object: 'policy_version',
    template_id: version.templateId,
    version_seq: version.versionSeq,
    parameters: orderedParameters(version.templateId, version.parameters),
    materialized_predicate: orderedMaterializedPredicate(version.materializedPredicate),
    human_summary: version.humanSummary,
    content_digest: version.contentDigest.toString('hex'),
    created_at: version.createdAt.toISOString(),
    is_head: version.versionSeq === headSeq,
  };
}

/** The answer to a head move, rollout or rollback alike. */
export function presentHeadMove(templateId: string, moved: HeadMove): PolicyHeadMove {
  return {
    template_id: templateId,
    current_head_seq: moved.head.versionSeq,
    current_head_digest: moved.head.contentDigest.toString('hex'),
    previous_head_seq: moved.previous?.versionSeq ?? null,
  };
}
