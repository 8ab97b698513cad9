// Agent tool policy documents against the tenant (docs/policy-documents.md): validation of a document by the pure
// rules and by the tenant's policy registry (the template its intents bind must be rolled out, the version and head
// it pins must be the registry's, and every release rule it brings must pass the predicate validator), and the
// effective policy of a tenant overlay merged onto its org base, which is the registry's head of that template.
import type { EffectivePolicy, PolicyIssue, PolicyValidation } from '../contracts/policy-documents.ts';
import { findPolicyHead, findPolicyVersion } from '../db/policy-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { Queryable } from '../infra/database.ts';
import { policyDocumentIssuesMax } from '../limits.ts';
import { policyDocumentDigest, policyVersionLabel } from '../policy-document/digest.ts';
import { readPolicyDocument, type PolicyBinding, type PolicyDocument } from '../policy-document/document.ts';
import { mergeOverlay, type MergeReport } from '../policy-document/merge.ts';
import { checkPolicyRules } from '../policy-document/rules.ts';
import { compilePredicate, findPreset, findTemplate, materializeTemplate, PredicateError } from '../predicate/index.ts';
import { parseDigest } from './policy-service.ts';

interface Findings {
  readonly errors: PolicyIssue[];
  readonly warnings: PolicyIssue[];
}

const findings = (): Findings => ({ errors: [], warnings: [] });

/** The org base of an org policy id: the tenant registry's head of the template of that id, as a flat document that
 * binds it. An overlay may add tools and narrow the intent; it may not bind another template or an older version. */
interface OrgBase {
  readonly document: PolicyDocument;
  readonly versionSeq: number;
  readonly contentDigestHex: string;
}

const templateIdPattern = /^[a-z0-9_]{1,64}$/;

async function readOrgBase(tx: Queryable, tenantId: string, policyId: string): Promise<OrgBase | undefined> {
  if (!templateIdPattern.test(policyId)) return undefined;
  const head = await findPolicyHead(tx, tenantId, policyId);
  if (!head) return undefined;
  const contentDigestHex = head.contentDigest.toString('hex');
  return {
    versionSeq: head.versionSeq,
    contentDigestHex,
    document: {
      version: 1,
      name: policyId,
      // A capability allows only its intent's tools: the service's base denies by default.
      default_deny: true,
      tools: {},
      intent: { policy_binding: { template_id: policyId, version_seq: head.versionSeq, head_digest: `sha256:${contentDigestHex}` } },
    },
  };
}

/** The registry checks of an intent binding; answers the release rule it binds, for the predicate check. */
async function checkBinding(tx: Queryable, tenantId: string, binding: PolicyBinding | undefined, out: Findings): Promise<unknown> {
  if (binding?.template_id === undefined) return undefined;
  const path = 'intent.policy_binding';
  const templateId = binding.template_id;
  if (findTemplate(templateId) === undefined) {
    out.errors.push({ path: `${path}.template_id`, code: 'policy.unknown_policy_template', message: `no managed template is named ${templateId}` });
    return undefined;
  }
  const head = await findPolicyHead(tx, tenantId, templateId);
  if (!head) {
    out.errors.push({ path: `${path}.template_id`, code: 'policy.template_not_rolled_out', message: `this tenant has rolled out no version of ${templateId}; intents cannot bind it yet` });
    return undefined;
  }
  const versionSeq = binding.version_seq ?? head.versionSeq;
  const version = await findPolicyVersion(tx, tenantId, templateId, { versionSeq });
  if (!version) {
    out.errors.push({ path: `${path}.version_seq`, code: 'policy.policy_version_not_found', message: `this tenant has no version ${versionSeq} of ${templateId}` });
    return undefined;
  }
  if (versionSeq !== head.versionSeq) {
    out.warnings.push({ path: `${path}.version_seq`, code: 'policy.binding_not_head', message: `version ${versionSeq} is not the head (${head.versionSeq}); a new intent must bind the head` });
  }
  if (binding.head_digest !== undefined && !parseDigest(binding.head_digest.toLowerCase())?.equals(head.contentDigest)) {
    out.errors.push({ path: `${path}.head_digest`, code: 'policy.head_digest_mismatch', message: `the head of ${templateId} is sha256:${head.contentDigest.toString('hex')}` });
  }
  return version.materializedPredicate;
}

/** Every release rule the document brings passes the predicate validator: the one its binding names, and the rule
 * of each evidence preset's template with its defaults. */
function checkReleaseRules(document: PolicyDocument, boundRule: unknown, out: Findings): void {
  const judge = (path: string, build: () => unknown) => {
    try {
      compilePredicate(build());
    } catch (error) {
      if (!(error instanceof PredicateError) && !(error instanceof ServiceError)) throw error;
      out.errors.push({ path, code: 'policy.release_rule_invalid', message: error.message });
    }
  };
  if (boundRule !== undefined) judge('intent.policy_binding', () => boundRule);
  for (const [name, entry] of Object.entries(document.tools)) {
    const preset = entry.evidence_preset === undefined ? undefined : findPreset(entry.evidence_preset);
    if (preset) judge(`tools.${name}.evidence_preset`, () => materializeTemplate(preset.templateId).predicate);
  }
}

/** At most policyDocumentIssuesMax issues; the rest are counted in one last issue. */
function bounded(issues: PolicyIssue[]): PolicyIssue[] {
  if (issues.length <= policyDocumentIssuesMax) return issues;
  const rest = issues.length - policyDocumentIssuesMax + 1;
  return [...issues.slice(0, policyDocumentIssuesMax - 1), { path: '(root)', code: 'policy.issues_truncated', message: `${rest} more issues are not listed` }];
}

export interface ValidateOptions {
  readonly strict: boolean;
  readonly resolveInheritance: boolean;
}

/** `POST /v1/policy/validate`: every problem of the document as an issue, in a 200 answer. */
export async function validatePolicyDocument(tx: Queryable, tenantId: string, raw: unknown, options: ValidateOptions): Promise<PolicyValidation> {
  const read = readPolicyDocument(raw);
  const policyName = typeof (raw as { name?: unknown })?.name === 'string' ? ((raw as { name: string }).name) : null;
  const answer = (local: Findings, remote: Findings, checks: { name: string; passed: boolean }[], extra: Partial<PolicyValidation> = {}): PolicyValidation => ({
    object: 'policy_validation',
    valid: local.errors.length === 0 && remote.errors.length === 0 && checks.every((check) => check.passed),
    local_valid: local.errors.length === 0,
    remote_valid: remote.errors.length === 0 && checks.every((check) => check.passed),
    policy_name: policyName,
    tenant_id: tenantId,
    errors: bounded([...local.errors, ...remote.errors]),
    warnings: bounded([...local.warnings, ...remote.warnings]),
    checks,
    ...extra,
  });
  if (!read.document) return answer({ errors: read.issues, warnings: [] }, findings(), [{ name: 'document', passed: false }]);

  let document = read.document;
  const remote = findings();
  const checks = [{ name: 'document', passed: true }];
  let mergeReport: MergeReport | undefined;
  if (options.resolveInheritance && document.extends !== undefined) {
    const base = await readOrgBase(tx, tenantId, document.extends.org_policy_id);
    if (!base) {
      remote.errors.push({ path: 'extends.org_policy_id', code: 'policy.org_policy_not_found', message: `this tenant has rolled out no policy ${document.extends.org_policy_id}` });
      checks.push({ name: 'inheritance', passed: false });
      return answer(toFindings(checkPolicyRules(document, options)), remote, checks);
    }
    const merged = mergeOverlay(base.document, document);
    mergeReport = merged.report;
    remote.errors.push(...merged.report.denied_widenings);
    checks.push({ name: 'inheritance', passed: merged.report.denied_widenings.length === 0 });
    document = merged.effective;
  }
  const local = toFindings(checkPolicyRules(document, options));
  checks.push({ name: 'rules', passed: local.errors.length === 0 });
  const bindingFindings = findings();
  const boundRule = await checkBinding(tx, tenantId, document.intent?.policy_binding, bindingFindings);
  checks.push({ name: 'policy_binding', passed: bindingFindings.errors.length === 0 });
  const ruleFindings = findings();
  checkReleaseRules(document, boundRule, ruleFindings);
  checks.push({ name: 'release_rules', passed: ruleFindings.errors.length === 0 });
  remote.errors.push(...bindingFindings.errors, ...ruleFindings.errors);
  remote.warnings.push(...bindingFindings.warnings);
  const valid = local.errors.length === 0 && remote.errors.length === 0;
  // An overlay not resolved has no effective digest: what it means depends on its org base.
  const digestible = valid && (document.extends === undefined || mergeReport !== undefined);
  return answer(local, remote, checks, {
    ...(digestible ? { effective_policy_digest: policyDocumentDigest(document) } : {}),
    ...(mergeReport ? { merge_report: mergeReport } : {}),
  });
}

const toFindings = (rules: { errors: PolicyIssue[]; warnings: PolicyIssue[] }): Findings => ({ errors: [...rules.errors], warnings: [...rules.warnings] });

/**
 * `POST /v1/org-policies/{policy_id}/effective`: the overlay merged onto the tenant registry's head of `policy_id`.
 * 404 when the tenant has rolled out no such policy; 422 when the overlay is not one, widens its base, or merges into
 * a document that does not validate. `currentDigest` equal to the effective digest answers `unchanged`.
 */
export async function resolveEffectivePolicy(
  tx: Queryable,
  tenantId: string,
  policyId: string,
  raw: unknown,
  currentDigest: string | undefined,
): Promise<EffectivePolicy> {
  const read = readPolicyDocument(raw);
  const overlay = read.document;
  if (!overlay) throw new ServiceError('policy.overlay_invalid', { details: { issues: bounded(read.issues) } });
  if (overlay.version !== 2 || overlay.extends === undefined) {
    throw new ServiceError('policy.overlay_invalid', { details: { issues: [{ path: 'extends', code: 'policy.field_required', message: 'an overlay is a version 2 document that extends an org base' }] } });
  }
  if (overlay.extends.org_policy_id !== policyId) {
    throw new ServiceError('policy.overlay_invalid', {
      details: { issues: [{ path: 'extends.org_policy_id', code: 'policy.org_policy_mismatch', message: `the overlay extends ${overlay.extends.org_policy_id}, not ${policyId}` }] },
    });
  }
  const base = await readOrgBase(tx, tenantId, policyId);
  if (!base) throw new ServiceError('policy.org_policy_not_found');
  const { effective, report } = mergeOverlay(base.document, overlay);
  if (report.denied_widenings.length > 0) throw new ServiceError('policy.widening_denied', { details: { denied_widenings: bounded(report.denied_widenings), merge_report: report } });

  const check = findings();
  const reread = readPolicyDocument(effective);
  check.errors.push(...reread.issues);
  if (reread.document) {
    check.errors.push(...checkPolicyRules(effective, { strict: false }).errors);
    const boundRule = await checkBinding(tx, tenantId, effective.intent?.policy_binding, check);
    checkReleaseRules(effective, boundRule, check);
  }
  if (check.errors.length > 0) throw new ServiceError('policy.effective_invalid', { details: { issues: bounded(check.errors), merge_report: report } });

  const digest = policyDocumentDigest(effective);
  const unchanged = currentDigest !== undefined && currentDigest.trim().toLowerCase() === digest;
  return {
    object: 'effective_policy',
    tenant_id: tenantId,
    org_policy_id: policyId,
    unchanged,
    ...(unchanged ? {} : { effective_policy: effective }),
    effective_policy_digest: digest,
    effective_policy_version: policyVersionLabel(effective.name, digest),
    merge_report: report,
    org_base_version_seq: base.versionSeq,
    org_base_content_digest: base.contentDigestHex,
  };
}
