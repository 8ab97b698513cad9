// What a well-formed policy document must also agree with, without the tenant's registry: the evidence presets it
// names exist, the tools its intent allows are declared, and (strict) every side-effecting tool is allowed. Pure.
import { allowedToolLengthMax } from '../limits.ts';
import { findPreset } from '../predicate/index.ts';
import type { PolicyDocument, PolicyIssue } from './document.ts';

export interface RuleFindings {
  readonly errors: PolicyIssue[];
  readonly warnings: PolicyIssue[];
}

/** The tool names an intent bound by this document may allow: a tool's `operation`, else its name. */
export function operationOf(toolName: string, entry: { operation?: string | undefined }): string {
  return (entry.operation ?? toolName).trim().toLowerCase();
}

/**
 * Checks a read document against the catalogue: `strict` also asks, when the intent allows a list of tools and
 * `default_deny` holds, that every side-effecting tool be in it (else a side effect could never be authorized).
 */
export function checkPolicyRules(document: PolicyDocument, options: { strict: boolean }): RuleFindings {
  const errors: PolicyIssue[] = [];
  const warnings: PolicyIssue[] = [];
  const toolEntries = [
    ...Object.entries(document.tools).map(([name, entry]) => ({ path: `tools.${name}`, name, entry })),
    ...Object.entries(document.overrides?.tools ?? {}).map(([name, entry]) => ({ path: `overrides.tools.${name}`, name, entry })),
  ];
  for (const { path, name, entry } of toolEntries) {
    if (entry.evidence_preset !== undefined && findPreset(entry.evidence_preset) === undefined) {
      errors.push({ path: `${path}.evidence_preset`, code: 'policy.unknown_evidence_preset', message: `no archetype preset is named ${entry.evidence_preset}` });
    }
    // The service keeps no vendor packs (vendor evidence mapped onto a preset): naming one cannot be honoured.
    if (entry.vendor_pack !== undefined) {
      errors.push({ path: `${path}.vendor_pack`, code: 'policy.unknown_vendor_pack', message: `this service has no vendor pack ${entry.vendor_pack}; name an evidence_preset` });
    }
    if (operationOf(name, entry).length > allowedToolLengthMax) {
      errors.push({ path: `${path}.operation`, code: 'policy.operation_invalid', message: `an intent's allowed tool has at most ${allowedToolLengthMax} characters` });
    }
  }
  const allowed = document.intent?.allowed_tools;
  if (allowed !== undefined && allowed.length > 0) {
    const declared = new Set(Object.keys(document.tools));
    for (const [index, tool] of allowed.entries()) {
      // An overlay may allow a tool its org base declares; only a document that stands alone must declare them all.
      if (!declared.has(tool) && document.extends === undefined) {
        errors.push({ path: `intent.allowed_tools.${index}`, code: 'policy.allowed_tool_not_registered', message: `${tool} is not declared in tools` });
      }
    }
    if (options.strict && document.default_deny) {
      for (const [name, entry] of Object.entries(document.tools)) {
        if (entry.side_effecting === true && !allowed.includes(name)) {
          errors.push({ path: `tools.${name}`, code: 'policy.side_effecting_not_allowed', message: `side-effecting ${name} is not in intent.allowed_tools, and default_deny is true` });
        }
      }
    }
  }
  const budgetCents = budgetCapCents(document);
  if (budgetCents !== undefined) {
    for (const [name, entry] of Object.entries(document.tools)) {
      if (entry.max_spend_cents !== undefined && entry.max_spend_cents > budgetCents) {
        warnings.push({ path: `tools.${name}.max_spend_cents`, code: 'policy.tool_cap_above_budget', message: `${entry.max_spend_cents} cents is more than the intent budget of ${budgetCents} cents` });
      }
    }
  }
  return { errors, warnings };
}

/** The intent budget in cents, when the document caps it (`max_spend_usd`, dollars with cents). */
function budgetCapCents(document: PolicyDocument): number | undefined {
  const usd = document.intent?.budget?.max_spend_usd;
  return usd === undefined ? undefined : Math.round(usd * 100);
}
