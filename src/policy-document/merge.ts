// A tenant overlay merged onto its org base (docs/policy-documents.md#effective-policy): the overlay may add tools and
// narrow what the base allows, never widen it. Every widening it attempts is reported, not silently dropped. Pure.
import type { PolicyBinding, PolicyDocument, PolicyIntentSection, PolicyIssue, PolicyToolEntry } from './document.ts';

export interface MergeReport {
  org_policy_id: string | null;
  org_id: string | null;
  base_policy_name: string;
  overlay_policy_name: string | null;
  /** The overlay's fields that changed the base, as dotted paths, in the order they were applied. */
  overrides_applied: string[];
  /** What the overlay asked for and may not have; an effective policy exists only when this is empty. */
  denied_widenings: PolicyIssue[];
}

export interface MergeResult {
  /** A flat (version 1) document: the base with the overlay applied. */
  readonly effective: PolicyDocument;
  readonly report: MergeReport;
}

class Merge {
  readonly applied: string[] = [];
  readonly denied: PolicyIssue[] = [];
  deny(path: string, code: string, message: string): void {
    this.denied.push({ path, code, message });
  }
}

function mergeTool(base: PolicyToolEntry, patch: PolicyToolEntry, path: string, merge: Merge): PolicyToolEntry {
  const merged: PolicyToolEntry = { ...base };
  if (patch.side_effecting !== undefined) {
    if (base.side_effecting === true && !patch.side_effecting) {
      merge.deny(`${path}.side_effecting`, 'policy.cannot_disable_org_side_effecting_tool', 'the org base requires this tool to be side-effecting');
    } else {
      merged.side_effecting = patch.side_effecting;
      merge.applied.push(`${path}.side_effecting`);
    }
  }
  if (patch.max_spend_cents !== undefined) {
    if (base.max_spend_cents !== undefined && patch.max_spend_cents > base.max_spend_cents) {
      merge.deny(`${path}.max_spend_cents`, 'policy.cannot_raise_spend_cap', `${patch.max_spend_cents} cents is above the org cap of ${base.max_spend_cents}`);
    } else {
      merged.max_spend_cents = patch.max_spend_cents;
      merge.applied.push(`${path}.max_spend_cents`);
    }
  }
  if (patch.spend_from_args !== undefined) {
    if (base.max_spend_cents !== undefined) merge.deny(`${path}.spend_from_args`, 'policy.cannot_override_org_spend_mode', 'the org base caps this tool with max_spend_cents');
    else {
      merged.spend_from_args = patch.spend_from_args;
      delete merged.max_spend_cents;
      merge.applied.push(`${path}.spend_from_args`);
    }
  }
  for (const field of ['evidence_preset', 'vendor_pack', 'operation'] as const) {
    if (patch[field] !== undefined && patch[field] !== base[field]) {
      merged[field] = patch[field];
      merge.applied.push(`${path}.${field}`);
    }
  }
  if (merged.side_effecting === true && merged.evidence_preset === undefined) {
    merge.deny(`${path}.evidence_preset`, 'policy.missing_evidence_preset', 'a side-effecting tool must name an evidence preset after the merge');
  }
  return merged;
}

function mergeTools(base: PolicyDocument, overlay: PolicyDocument, merge: Merge): Record<string, PolicyToolEntry> {
  const tools: Record<string, PolicyToolEntry> = Object.fromEntries(Object.entries(base.tools).map(([name, entry]) => [name, { ...entry }]));
  for (const [name, patch] of Object.entries(overlay.overrides?.tools ?? {})) {
    const existing = tools[name];
    if (existing === undefined) merge.deny(`overrides.tools.${name}`, 'policy.unknown_org_tool_override', `the org base declares no tool ${name} to override`);
    else tools[name] = mergeTool(existing, patch, `tools.${name}`, merge);
  }
  for (const [name, entry] of Object.entries(overlay.tools)) {
    if (Object.hasOwn(tools, name)) merge.deny(`tools.${name}`, 'policy.cannot_replace_org_tool', `the org base declares ${name}; change it under overrides.tools`);
    else tools[name] = { ...entry };
  }
  return tools;
}

function mergeBinding(base: PolicyBinding | undefined, asked: PolicyBinding | undefined, merge: Merge): PolicyBinding | undefined {
  if (asked === undefined) return base && { ...base };
  const merged: PolicyBinding = { ...base };
  const path = 'intent.policy_binding';
  if (asked.template_id !== undefined) {
    if (base?.template_id !== undefined && asked.template_id !== base.template_id) merge.deny(`${path}.template_id`, 'policy.cannot_change_org_template', `the org base binds ${base.template_id}`);
    else merged.template_id = asked.template_id;
  }
  if (asked.version_seq !== undefined) {
    if (base?.version_seq !== undefined && asked.version_seq < base.version_seq) {
      merge.deny(`${path}.version_seq`, 'policy.cannot_downgrade_template_version', `the org base binds version ${base.version_seq}`);
    } else if (asked.version_seq !== base?.version_seq) {
      merged.version_seq = asked.version_seq;
      merge.applied.push(`${path}.version_seq`);
    }
  }
  if (asked.head_digest !== undefined) {
    if (base?.head_digest !== undefined && asked.head_digest.toLowerCase() !== base.head_digest.toLowerCase()) merge.deny(`${path}.head_digest`, 'policy.cannot_change_org_head_digest', 'the org base pins another head');
    else merged.head_digest = asked.head_digest;
  }
  return merged.template_id === undefined ? undefined : merged;
}

function mergeIntent(base: PolicyDocument, overlay: PolicyDocument, merge: Merge): PolicyIntentSection | undefined {
  // The overlay's own intent section and its overrides ask alike; the overrides win where both speak.
  const asked: PolicyIntentSection = { ...overlay.intent, ...overlay.overrides?.intent };
  const baseIntent = base.intent ?? {};
  const binding = mergeBinding(baseIntent.policy_binding, asked.policy_binding, merge);

  let budget = baseIntent.budget && { ...baseIntent.budget };
  if (asked.budget !== undefined) {
    const cap = baseIntent.budget?.max_spend_usd;
    if (baseIntent.budget?.currency !== undefined && asked.budget.currency !== baseIntent.budget.currency) {
      merge.deny('intent.budget.currency', 'policy.cannot_change_org_currency', `the org base budgets in ${baseIntent.budget.currency}`);
    } else if (cap !== undefined && asked.budget.max_spend_usd !== undefined && asked.budget.max_spend_usd > cap) {
      merge.deny('intent.budget.max_spend_usd', 'policy.cannot_raise_budget_cap', `${asked.budget.max_spend_usd} is above the org cap of ${cap}`);
    } else {
      budget = { ...budget, ...asked.budget };
      merge.applied.push('intent.budget');
    }
  }

  let allowedTools = baseIntent.allowed_tools && [...baseIntent.allowed_tools];
  if (asked.allowed_tools !== undefined && asked.allowed_tools.length > 0) {
    if (allowedTools === undefined || allowedTools.length === 0) allowedTools = [...asked.allowed_tools];
    else {
      const orgAllowed = new Set(allowedTools);
      const widened = asked.allowed_tools.filter((tool) => !orgAllowed.has(tool));
      if (widened.length > 0) merge.deny('intent.allowed_tools', 'policy.cannot_widen_allowed_tools', `the org base does not allow ${widened.join(', ')}`);
      allowedTools = asked.allowed_tools.filter((tool) => orgAllowed.has(tool));
      merge.applied.push('intent.allowed_tools');
    }
  }
  const section: PolicyIntentSection = {
    ...(binding ? { policy_binding: binding } : {}),
    ...(budget ? { budget } : {}),
    ...(allowedTools && allowedTools.length > 0 ? { allowed_tools: allowedTools } : {}),
  };
  return Object.keys(section).length > 0 ? section : undefined;
}

/**
 * Merges a tenant overlay (a version 2 document with `extends`) onto its org base. The base is trusted as it is; the
 * overlay's widenings are collected in `report.denied_widenings`, and the caller must not use `effective` when any
 * was denied.
 */
export function mergeOverlay(base: PolicyDocument, overlay: PolicyDocument): MergeResult {
  if (overlay.extends === undefined) throw new Error('mergeOverlay takes an overlay: a document that extends an org base');
  const merge = new Merge();
  const askedDefaultDeny = overlay.overrides?.default_deny;
  if (askedDefaultDeny !== undefined) merge.applied.push('overrides.default_deny');
  const tools = mergeTools(base, overlay, merge);
  const intent = mergeIntent(base, overlay, merge);

  const adapterValues = [base.adapter, overlay.adapter, overlay.overrides?.adapter].map((section) => section?.deny_provider_executed_tools);
  if (base.adapter?.deny_provider_executed_tools === true && adapterValues.slice(1).includes(false)) {
    merge.deny('adapter.deny_provider_executed_tools', 'policy.cannot_relax_provider_executed_deny', 'the org base denies tools the model provider runs');
  }
  const effective: PolicyDocument = {
    version: 1,
    name: overlay.name,
    // The stricter wins: any of the three asking for default deny makes it so.
    default_deny: base.default_deny || overlay.default_deny || askedDefaultDeny === true,
    tools,
    ...(intent ? { intent } : {}),
    ...(adapterValues.some((value) => value !== undefined) ? { adapter: { deny_provider_executed_tools: adapterValues.includes(true) } } : {}),
  };
  return {
    effective,
    report: {
      org_policy_id: overlay.extends.org_policy_id,
      org_id: overlay.extends.org_id,
      base_policy_name: base.name,
      overlay_policy_name: overlay.name,
      overrides_applied: merge.applied,
      denied_widenings: merge.denied,
    },
  };
}
